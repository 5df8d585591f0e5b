"""Op definitions; importing this package registers every op (one module per op family)."""
from . import conv, elemwise, matmul, pad, pool, qnn, reduce, softmax, transform  # noqa: F401
from . import batch_matmul, gelu, horizontal, norm, view  # noqa: F401  (transformer ops, horizontal fusion)
