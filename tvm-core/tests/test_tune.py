"""tvm.tune: the search checks every configuration against the reference before timing it,
stores the best under the kernel, target and device, and tvm.compile uses the stored record (or
the target's default) without searching."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tvm
from tvm.testing import kernels
from tvm.tune import Database, Tunable, device_fingerprint, vector_lanes

TARGET = "c"


def small_matmul(calls: list | None = None) -> Tunable:
    """A 64x64x64 matmul over mr/nr, recording which configuration each build used."""
    inner = kernels.tunable_matmul_cpu(64, 64, 64, name="mm")

    def factory(mr, nr):
        if calls is not None:
            calls.append({"mr": mr, "nr": nr})
        return inner.factory(mr, nr)

    return Tunable(factory, inner.knobs, key=inner.key, default={"mr": 4, "nr": 16}, constraint=inner._constraint)


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    return a, b, a @ b


def test_tune_stores_the_best_and_compile_uses_it_without_searching(tmp_path):
    db = Database(tmp_path / "tuning.json")
    a, b, ref = data()
    result = tvm.tune.tune(
        small_matmul(),
        TARGET,
        inputs=[a, b],
        outputs=[((64, 64), "float32")],
        reference=ref,
        database=db,
        progress=False,
    )
    timed = [t for t in result.trials if "ms" in t]
    assert len(result.trials) == 20 and len(timed) == 20
    assert result.best_ms == min(t["ms"] for t in timed)
    assert result.default_config == {"mr": 4, "nr": 16} and result.trials[0]["config"] == result.default_config
    stored = json.loads((tmp_path / "tuning.json").read_text())["records"]
    (key,) = stored
    assert stored[key]["config"] == result.best_config and device_fingerprint(tvm.target.Target(TARGET)) in key
    calls: list = []
    kernel = small_matmul(calls)
    mod = tvm.compile(kernel.select(tvm.target.Target(TARGET), database=Database(tmp_path / "tuning.json")), TARGET)
    assert calls == [result.best_config]  # one build, of the stored configuration: no search
    c = tvm.runtime.empty((64, 64), "float32")
    mod["mm"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4)


def test_tvm_compile_of_a_tunable_uses_the_default_database(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_TUNING_DATABASE", str(tmp_path / "db.json"))
    a, b, ref = data(1)
    result = tvm.tune.tune(
        small_matmul(), TARGET, inputs=[a, b], outputs=[((64, 64), "float32")], reference=ref, progress=False
    )
    calls: list = []
    mod = tvm.compile(small_matmul(calls), TARGET)
    assert calls == [result.best_config]
    c = tvm.runtime.empty((64, 64), "float32")
    mod["mm"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4)


def test_without_a_record_compile_uses_the_targets_default(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_TUNING_DATABASE", str(tmp_path / "empty.json"))
    calls: list = []
    tvm.compile(small_matmul(calls), TARGET)
    assert calls == [{"mr": 4, "nr": 16}]
    # the zoo's default follows the target's vector width (one register of float32)
    lanes = vector_lanes(tvm.target.Target("c -mcpu=native"))
    assert kernels.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=native")) == {"mr": 4, "nr": lanes}
    assert kernels.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=skylake-avx512"))["nr"] == 16
    assert kernels.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=haswell"))["nr"] == 8


def test_wrong_or_failing_configurations_are_skipped_with_the_reason():
    inner = kernels.tunable_matmul_cpu(64, 64, 64, name="mm")

    def factory(mr, nr):
        if nr == 32:
            raise RuntimeError("no build")
        return inner.factory(mr, nr)

    a, b, ref = data(2)
    flaky = Tunable(factory, inner.knobs, key="mm-some-fail", default={"mr": 4, "nr": 16}, constraint=inner._constraint)
    result = tvm.tune.tune(
        flaky,
        TARGET,
        inputs=[a, b],
        outputs=[((64, 64), "float32")],
        reference=ref,
        database=Database(None),
        progress=False,
    )
    failed = [t for t in result.trials if "error" in t]
    assert len(failed) == 4 and all("RuntimeError: no build" in t["error"] for t in failed)
    assert result.best_config["nr"] != 32
    # a reference no configuration matches: every one is reported wrong, none is stored
    wrong = Tunable(
        inner.factory, inner.knobs, key="mm-wrong", default={"mr": 4, "nr": 16}, constraint=inner._constraint
    )
    with pytest.raises(ValueError, match="no configuration of mm-wrong is valid.*wrong result"):
        tvm.tune.tune(
            wrong,
            TARGET,
            inputs=[a, b],
            outputs=[((64, 64), "float32")],
            reference=ref * 2,
            database=Database(None),
            progress=False,
        )


def test_the_time_budget_stops_the_search_after_the_default(tmp_path):
    a, b, ref = data(3)
    result = tvm.tune.tune(
        small_matmul(),
        TARGET,
        inputs=[a, b],
        outputs=[((64, 64), "float32")],
        reference=ref,
        budget_s=0,
        database=Database(None),
        progress=False,
    )
    assert [t["config"] for t in result.trials] == [{"mr": 4, "nr": 16}]


def test_a_damaged_database_is_set_aside(tmp_path):
    path = tmp_path / "tuning.json"
    path.write_text("{ not json")
    db = Database(path)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert db.lookup("k", "c", "fp") is None
    assert (tmp_path / "tuning.json.corrupt").exists()
    db.store("k", "c", "fp", {"config": {"mr": 2}})
    assert Database(path).lookup("k", "c", "fp")["config"] == {"mr": 2}


def test_knob_errors_name_the_knob():
    kernel = small_matmul()
    with pytest.raises(ValueError, match="knob nr=12 is not one of"):
        kernel.build({"mr": 4, "nr": 12})
    with pytest.raises(ValueError, match="unknown knob 'kc'"):
        kernel.build({"mr": 4, "nr": 16, "kc": 8})
    with pytest.raises(ValueError, match="excluded by the kernel's constraint"):
        Tunable(kernel.factory, {"mr": [3, 4], "nr": [16]}, constraint=lambda c: 64 % c["mr"] == 0).build(
            {"mr": 3, "nr": 16}
        )


def test_the_benchmark_case_compares_tuned_with_untuned(monkeypatch, tmp_path):
    from tvm.testing.benchmark import tuned_vs_untuned

    monkeypatch.setenv("TVM_TUNING_DATABASE", str(tmp_path / "untouched.json"))
    a, b, ref = data(4)
    case = tuned_vs_untuned(small_matmul(), TARGET, [a, b], ((64, 64), "float32"), ref, repeats=3)
    assert case["params"]["untuned"] == {"mr": 4, "nr": 16} and case["configurations_tried"] == 20
    assert case["tvm_ms"] > 0 and case["untuned_ms"] > 0 and case["ratio_best"] > 0
    assert not (tmp_path / "untouched.json").exists()  # the benchmark keeps its records in memory
