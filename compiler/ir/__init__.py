"""The IR: types, expressions, the op registry, a printer and a numpy interpreter."""
from .expr import Call, Constant, Expr, Function, IRModule, State, Tuple, Var, iter_calls, post_order, users
from .op import OPS, OpDef, OpPattern, call, get_op, register_op
from .rewrite import rewrite
from .types import TensorType, TupleType

__all__ = ["Call", "Constant", "Expr", "Function", "IRModule", "State", "Tuple", "Var", "iter_calls", "post_order",
           "rewrite", "users", "OPS", "OpDef", "OpPattern", "call", "get_op", "register_op", "TensorType",
           "TupleType"]
