"""The tuning knobs reach the phases that own them (no qemu): a tiny int8 pw → dw → pw block on
cortex-m4 offers in-place / variant / chain / global moves and its kernels' lowering knobs; each changes the build it names; the
empty configuration is the default build; compile --ram-limit without records picks a predicted build
or names the smallest arena reachable."""
import onnx
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.tune import TuningRecords
from tinyfuse.tune.ramlimit import STACK_ESTIMATE, predicted_config
from tinyfuse.tune.space import apply_moves, families, moves_of
from tests.builders.int8_models import qdq_chain

LOWERING_KNOBS = {"weights", "channels", "unroll"}     # lower.group_knobs
BLOCK = [dict(cout=16, k=1, s=1, dw=False, relu=True), dict(cout=16, k=3, s=1, dw=True, relu=True),
         dict(cout=8, k=1, s=1, dw=False, relu=False)]


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    model, _ = qdq_chain((1, 8, 8, 8), BLOCK, seed=1)
    path = tmp_path_factory.mktemp("tune") / "block.onnx"
    onnx.save(model, path)
    return path


def _build(path, moves):
    return compile_model(path, target="cortex-m4", tuning_records=TuningRecords(config=apply_moves(moves)))


def test_each_move_changes_what_it_names(block):
    base = compile_model(block, target="cortex-m4")
    assert _build(block, []).files == base.files                      # no knob: the default, byte for byte
    moves = moves_of(base)
    kinds = {m.family or m.knobs[0][0] for m in moves}
    assert {"poly_fuse", "scratch_bytes", "order", "weights:int16", "channels:4"} <= kinds
    assert kinds & {"channels:2", "channels:3"}                      # the other block width of its family
    for m in moves:
        res = _build(block, [m])
        k = dict(m.knobs)
        if k.get("inplace") is False:                                 # that kernel no longer in place
            assert len(res.memory.inplace) < len(base.memory.inplace) or res.arena_bytes > base.arena_bytes, m
        if k.get("fuse") is False:
            assert sum(bool(s.call.op.attrs.get("poly")) for s in res.steps) < \
                sum(bool(s.call.op.attrs.get("poly")) for s in base.steps), m
        if k.get("variant") == "ref":
            assert sorted(s.kernel.variant for s in res.steps) != sorted(s.kernel.variant for s in base.steps), m
        for name in LOWERING_KNOBS & set(k):                          # the kernel was lowered with it
            assert any(s.kernel.knobs.get(name) == k[name] for s in res.steps) and res.files != base.files, m
    for fam, ms in families(moves).items():                           # a family is one configuration
        assert _build(block, ms).files == _build(block, list(reversed(ms))).files, fam


def test_ram_limit_without_records_is_predicted(block):
    base = compile_model(block, target="cortex-m4")
    pick = predicted_config(block, "cortex-m4", 1 << 20)
    assert pick["arena_bytes"] + STACK_ESTIMATE <= 1 << 20 and pick["predicted"] > 0
    res = compile_model(block, target="cortex-m4", tuning_records=TuningRecords(config=pick["config"]))
    assert res.arena_bytes == pick["arena_bytes"]
    with pytest.raises(TinyfuseError, match=r"smallest arena reachable is (\d+) B") as e:
        predicted_config(block, "cortex-m4", 64)
    assert int(e.value.args[0].split("reachable is ")[1].split(" ")[0]) <= base.arena_bytes


def test_missing_dask_is_one_clear_error(monkeypatch):
    import sys
    from tinyfuse.tune.cluster import dask_client
    monkeypatch.setitem(sys.modules, "distributed", None)          # import distributed -> ImportError
    with pytest.raises(TinyfuseError, match=r"pip install 'tinyfuse\[tune\]'"):
        with dask_client(1):
            pass
