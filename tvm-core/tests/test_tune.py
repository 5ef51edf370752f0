"""tvm.tune: the search checks every configuration against the reference before timing it,
stores the best under the kernel, target and device, and tvm.compile uses the stored record (or
the target's default) without searching."""

from __future__ import annotations

import os

import json

import numpy as np
import pytest
import tvm
from tvm.testing import tunables
from tvm.tune import Database, Tunable, device_fingerprint, vector_lanes

TARGET = "c"


def small_matmul(calls: list | None = None) -> Tunable:
    """A 64x64x64 matmul over mr/nr, recording which configuration each build used."""
    inner = tunables.tunable_matmul_cpu(64, 64, 64, name="mm")

    def factory(mr, nr):
        if calls is not None:
            calls.append({"mr": mr, "nr": nr})
        return inner.factory(mr, nr)

    return Tunable(factory, inner.knobs, key=inner.key, default={"mr": 4, "nr": 16}, constraint=inner._constraint)


def tune_64(kernel: Tunable, a, b, ref, **options):
    """``tvm.tune.tune`` of a 64x64x64 matmul kernel on TARGET without a progress line, its
    records in memory unless ``database`` is given."""
    options.setdefault("database", Database(None))
    return tvm.tune.tune(
        kernel, TARGET, inputs=[a, b], outputs=[((64, 64), "float32")], reference=ref, progress=False, **options
    )


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    return a, b, a @ b


def test_tune_stores_the_best_and_compile_uses_it_without_searching(tmp_path):
    db = Database(tmp_path / "tuning.json")
    a, b, ref = data()
    result = tune_64(small_matmul(), a, b, ref, database=db)
    timed = [t for t in result.trials if "ms" in t]
    assert len(result.trials) == 20 and len(timed) == 20
    assert result.best_ms == min(t["ms"] for t in timed)
    assert result.search_s >= sum(t["ms"] for t in timed) / 1000  # each trial timed more than once
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
    # the zoo's default follows the target's vector width and registers (two vectors of float32
    # per row, a quarter of the registers as rows)
    lanes = vector_lanes(tvm.target.Target("c -mcpu=native"))
    native = tunables.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=native"))
    assert native["nr"] == 2 * lanes
    assert tunables.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=skylake-avx512")) == {
        "mr": 8,
        "nr": 32,
    }
    assert tunables.tunable_matmul_cpu().default_config(tvm.target.Target("c -mcpu=haswell")) == {"mr": 4, "nr": 16}
    assert tunables.tunable_matmul_cpu(12, 24, 8).default_config(tvm.target.Target("c -mcpu=haswell")) == {
        "mr": 4,
        "nr": 8,
    }


def test_wrong_or_failing_configurations_are_skipped_with_the_reason():
    inner = tunables.tunable_matmul_cpu(64, 64, 64, name="mm")

    def factory(mr, nr):
        if nr == 32:
            raise RuntimeError("no build")
        return inner.factory(mr, nr)

    a, b, ref = data(2)
    flaky = Tunable(factory, inner.knobs, key="mm-some-fail", default={"mr": 4, "nr": 16}, constraint=inner._constraint)
    result = tune_64(flaky, a, b, ref)
    failed = [t for t in result.trials if "error" in t]
    assert len(failed) == 4 and all("RuntimeError: no build" in t["error"] for t in failed)
    assert result.best_config["nr"] != 32
    # a reference no configuration matches: every one is reported wrong, none is stored
    wrong = Tunable(
        inner.factory, inner.knobs, key="mm-wrong", default={"mr": 4, "nr": 16}, constraint=inner._constraint
    )
    with pytest.raises(ValueError, match="no configuration of mm-wrong is valid.*wrong result"):
        tune_64(wrong, a, b, ref * 2)


def test_the_time_budget_stops_the_search_after_the_default(tmp_path):
    a, b, ref = data(3)
    result = tune_64(small_matmul(), a, b, ref, budget_s=0)
    assert [t["config"] for t in result.trials] == [{"mr": 4, "nr": 16}]


def test_a_damaged_database_is_set_aside(tmp_path):
    path = tmp_path / "tuning.json"
    Database(path).store("k", "c", "fp", {"config": {"mr": 4}})
    path.write_bytes(path.read_bytes()[:-30])  # truncated: still recognizably a tuning database
    db = Database(path)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert db.lookup("k", "c", "fp") is None
    assert (tmp_path / "tuning.json.corrupt").exists()
    db.store("k", "c", "fp", {"config": {"mr": 2}})
    assert Database(path).lookup("k", "c", "fp")["config"] == {"mr": 2}


def test_a_database_path_that_is_a_directory_is_never_moved(tmp_path):
    """It was taken for a damaged file and renamed, with everything in it, to ``.corrupt``."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    with pytest.warns(RuntimeWarning, match="is not a regular file; tuning records are kept in memory only"):
        db = Database(folder)
    db.store("k", "c", "fp", {"config": {"mr": 2}})
    assert db.lookup("k", "c", "fp")["config"] == {"mr": 2}
    assert (folder / "keep.txt").read_text() == "mine" and not (tmp_path / "project.corrupt").exists()


@pytest.mark.parametrize("config", [None, [8, 1], "lanes=8", {"mr": 4.0, "nr": 16}, {"mr": True, "nr": 16}])
def test_a_record_whose_configuration_is_malformed_falls_back_to_the_default(config):
    """A configuration that is no mapping reached ``.items()`` (AttributeError); True and 4.0
    passed the knob check as 1 and 4 and failed inside the kernel factory."""
    kernel = small_matmul()
    db = Database(None)
    db.store(kernel.key, TARGET, device_fingerprint(tvm.target.Target(TARGET)), {"config": config, "ms": 1.0})
    with pytest.warns(UserWarning, match="the tuning record no longer fits the kernel"):
        func = kernel.select(tvm.target.Target(TARGET), database=db)
    assert func.script() == kernel.build(kernel.default_config(tvm.target.Target(TARGET))).script()


def test_databases_sharing_a_file_keep_each_others_records(tmp_path):
    """Two processes tuning against one file (two Database objects here): a store writes what is
    on disk then plus its record, and a lookup sees what the other stored since."""
    path = tmp_path / "tuning.json"
    a, b = Database(path), Database(path)
    assert a.lookup("k_A", "c", "fp") is None  # a has read the (absent) file
    b.store("k_B", "c", "fp", {"config": {"tile": 4}, "ms": 2.0})
    assert a.lookup("k_B", "c", "fp")["config"] == {"tile": 4}
    a.store("k_A", "c", "fp", {"config": {"tile": 8}, "ms": 1.0})
    assert sorted(Database(path).records()) == [Database.key("k_A", "c", "fp"), Database.key("k_B", "c", "fp")]


def test_a_damaged_file_another_process_replaced_is_read_not_set_aside(tmp_path):
    """A lookup that found the file damaged sets it aside only if it is still that file: another
    process may have replaced it (under the lock) with a good one meanwhile."""
    path = tmp_path / "tuning.json"
    path.write_text("{ not json")
    db = Database(path)
    damaged = db._file_stamp()
    Database(tmp_path / "other.json").store("k", "c", "fp", {"config": {"tile": 4}})
    os.replace(tmp_path / "other.json", path)  # the good file another process wrote
    records, _ = db._reread_damaged(damaged, ValueError("damaged"))
    assert list(records) == [Database.key("k", "c", "fp")] and not (tmp_path / "tuning.json.corrupt").exists()


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
    assert case["params"]["untuned"] == {"mr": 4, "nr": 16} == case["params"]["target_default"]
    assert case["configurations_tried"] == 20 and case["search_best_ms"] > 0
    assert case["tvm_ms"] > 0 and case["untuned_ms"] > 0 and case["ratio_best"] > 0
    assert not (tmp_path / "untouched.json").exists()  # the benchmark keeps its records in memory


@pytest.mark.parametrize("lanes,parts", [(8, 1), (32, 1), (64, 2), (128, 4), (16, 8)])
def test_every_sum_configuration_matches_numpy(lanes, parts):
    a = np.random.default_rng(5).random(1 << 14, dtype="float32")
    func = tunables.sum_cpu(1 << 14, lanes, parts)
    out = tvm.runtime.empty((1,), "float32")
    tvm.compile(func, TARGET)["vector_sum"](tvm.runtime.tensor(a), out)
    np.testing.assert_allclose(out.numpy()[0], a.astype("float64").sum(), rtol=1e-5)


@pytest.mark.parametrize("lanes", [4, 8, 16, 32, 64])
def test_every_softmax_configuration_matches_numpy(lanes):
    from tvm.testing.kernels import reference_softmax

    x = np.random.default_rng(6).standard_normal((6, 128), dtype="float32") * 20
    out = tvm.runtime.empty((6, 128), "float32")
    tvm.compile(tunables.softmax_cpu(6, 128, lanes), TARGET)["row_softmax"](tvm.runtime.tensor(x), out)
    np.testing.assert_allclose(out.numpy(), reference_softmax(x), rtol=1e-5, atol=1e-7)


def test_cpu_defaults_follow_the_vector_isa():
    avx512, avx2 = tvm.target.Target("c -mcpu=skylake-avx512"), tvm.target.Target("c -mcpu=haswell")
    assert tunables.tunable_sum_cpu(1 << 20).default_config(avx512) == {"lanes": 64, "parts": 1}
    assert tunables.tunable_sum_cpu(1 << 20).default_config(avx2) == {"lanes": 32, "parts": 1}
    assert tunables.tunable_softmax_cpu(4, 1024).default_config(avx512) == {"lanes": 16}
    assert tunables.tunable_softmax_cpu(4, 1024).default_config(avx2) == {"lanes": 8}
    # a size the default does not divide leaves only the configurations that do
    assert all(1000 % c["lanes"] == 0 for c in tunables.tunable_softmax_cpu(4, 1000).configs())


GPU = {"max_threads": 1024, "warp_size": 32, "shared_memory": 49152}


@pytest.mark.parametrize(
    "limits,tile",
    [
        (GPU, 16),  # 256 threads at most by default
        ({**GPU, "max_threads": 128}, 8),
        ({**GPU, "shared_memory": 1024}, 8),  # two 16x16 float32 tiles need 2 KiB
        ({**GPU, "warp_size": 64, "max_threads": 64}, 8),
        ({"max_threads": 1, "warp_size": 1, "shared_memory": 1}, 4),
    ],
)
def test_device_default_tile_follows_the_devices_limits(limits, tile):
    assert tunables.default_tile(limits, 4, (512, 512, 512)) == tile
    assert tunables.default_tile(GPU, 4, (24, 24, 24)) == 8  # must divide the sizes


@pytest.mark.parametrize(
    "limits,cols,block",
    [
        (GPU, 10_000, 128),  # four warps
        ({**GPU, "warp_size": 64}, 10_000, 256),
        ({**GPU, "warp_size": 1}, 10_000, 32),  # CPU-backed devices
        (GPU, 100, 128),
        (GPU, 50, 64),  # no more threads than the row has elements
        (GPU, 3, 32),
        ({**GPU, "max_threads": 64, "warp_size": 64}, 10_000, 64),
    ],
)
def test_device_default_block_follows_the_devices_limits_and_the_row(limits, cols, block):
    assert tunables.default_block(limits, cols) == block


def test_device_limits_come_from_the_target_without_a_device():
    # cuda's target kind declares 1024 threads and 48 KiB; an attribute overrides the kind
    pytest.importorskip("tvm_backend_cuda")
    if tvm.device("cuda", 0).exist:
        pytest.skip("a CUDA device exists: its own limits apply")
    assert tvm.tune.device_limits(tvm.target.Target("cuda")) == {
        "max_threads": 1024,
        "warp_size": 32,
        "shared_memory": 49152,
    }
    narrow = tvm.target.Target("cuda -max_num_threads=64 -max_shared_memory_per_block=1024")
    assert tvm.tune.device_limits(narrow)["max_threads"] == 64
    kernel = tunables.tunable_row_sum(8, 1000)
    assert kernel.default_config(narrow) == {"block": 64}  # four warps would be 128
    assert [c["block"] for c in kernel.configs(narrow)] == [32, 64]
    fitting = tunables.tunable_matmul_tiled(64, 64, 64).configs(narrow)
    assert sorted({c["tile"] for c in fitting}) == [4, 8]  # 16 x 16 threads would be 256
    assert all(2 * c["tile"] ** 2 * c["work"] * 4 <= 1024 for c in fitting)  # both staged tiles fit


def test_the_search_skips_configurations_that_do_not_fit_the_target():
    inner = tunables.tunable_matmul_cpu(64, 64, 64, name="mm")
    narrow = Tunable(
        inner.factory,
        inner.knobs,
        key="mm-fits",
        default={"mr": 4, "nr": 16},
        constraint=inner._constraint,
        fits=lambda config, target: config["nr"] <= 16,
    )
    a, b, ref = data(7)
    result = tune_64(narrow, a, b, ref)
    assert len(result.trials) == 12 and all(t["config"]["nr"] <= 16 for t in result.trials)


def test_a_record_of_older_knobs_falls_back_to_the_default_with_a_warning():
    kernel = tunables.tunable_matmul_tiled(64, 64, 64, name="mm")
    target = tvm.target.Target("example")
    db = Database(None)
    db.store(kernel.key, target, device_fingerprint(target), {"config": {"tile": 8}, "ms": 1.0})  # no "work"
    with pytest.warns(UserWarning, match="lacks knob\\(s\\) work.*the tuning record no longer fits the kernel"):
        func = kernel.select(target, database=db)
    default = kernel.default_config(target)
    assert func.script() == kernel.build(default).script()


@pytest.mark.parametrize(
    "make",
    [
        lambda: tunables.tunable_softmax_cpu(2, 4),
        lambda: tunables.tunable_sum_cpu(16),
        lambda: tunables.tunable_matmul_cpu(8, 12, 8),
    ],
)
def test_a_default_the_constraint_rejects_for_these_sizes_falls_back_to_a_valid_one(make):
    """The zoo's defaults suit common sizes; at small ones the constraint rejected them and
    tvm.compile raised although valid configurations exist."""
    kernel = make()
    config = kernel.default_config(tvm.target.Target(TARGET))
    kernel.check(config)
    tvm.compile(kernel, target=TARGET)


def test_search_spaces_and_arguments_that_cannot_work_are_named():
    kernel = Tunable(small_matmul().factory, {"mr": [3], "nr": [5]}, constraint=lambda c: 64 % c["mr"] == 0)
    with pytest.raises(ValueError, match="no configuration of its knobs .* satisfies the kernel's constraint"):
        kernel.default_config(tvm.target.Target(TARGET))
    with pytest.raises(ValueError, match="knob 'shape': choice \\(4, 1\\) is a tuple"):
        Tunable(small_matmul().factory, {"shape": [(4, 1)]})
    assert Tunable(small_matmul().factory, {"mr": [np.int64(4)], "nr": [16]}).knobs["mr"] == [4]  # JSON-able
    a, b, ref = data(1)
    for bad in ({"repeats": 0}, {"budget_s": float("nan")}):
        with pytest.raises(ValueError, match="tvm.tune: (repeats|budget_s) must be"):
            tune_64(small_matmul(), a, b, ref, **bad)
    with pytest.raises(ValueError, match="reference has shape \\(64,\\), the last output \\(64, 64\\)"):
        tune_64(small_matmul(), a, b, ref[0])


def test_a_database_that_cannot_be_written_keeps_the_result_with_a_warning(tmp_path):
    a, b, ref = data(2)
    db = Database(str(tmp_path / "missing" / "folder" / "tuning.json"))
    (tmp_path / "missing").write_text("a file where the folder should be")
    with pytest.warns(UserWarning, match="could not be stored in the tuning database"):
        result = tune_64(small_matmul(), a, b, ref, database=db, budget_s=0)
    assert result.best_config == {"mr": 4, "nr": 16}


def test_json_nested_past_the_recursion_limit_is_a_damaged_database(tmp_path):
    path = tmp_path / "tuning.json"
    path.write_text('{"format": 1, "records": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert Database(str(path)).records() == {}


def test_arguments_of_the_wrong_kind_are_refused_before_the_search():
    a, b, ref = data(3)
    for bad in (small_matmul().factory, tunables.matmul_cpu(64, 64, 64)):
        with pytest.raises(TypeError, match="the kernel must be a tvm.tune.Tunable"):
            tvm.tune.tune(bad, TARGET, inputs=[a, b], outputs=[((64, 64), "float32")], reference=ref)
    for outputs in ([(64, "float32")], [((64, 64),)], [("float32", (64, 64))]):
        with pytest.raises(TypeError, match="outputs\\[0\\] must be \\(shape, dtype\\)"):
            tvm.tune.tune(small_matmul(), TARGET, inputs=[a, b], outputs=outputs, reference=ref)
    with pytest.raises(TypeError, match="database must be a Database, a file path or None, got int"):
        tune_64(small_matmul(), a, b, ref, database=5)
    with pytest.raises(TypeError, match="knob 'F': its choices are a list"):
        Tunable(small_matmul().factory, {"F": "abc"})
    with pytest.raises(TypeError, match="knob 'F': its choices are a list"):
        Tunable(small_matmul().factory, {"F": 5})
    with pytest.raises(TypeError, match="default is a function, got str"):
        Tunable(small_matmul().factory, {"mr": [4]}, default="x")
    with pytest.raises(TypeError, match="the default function returned NoneType, not a configuration"):
        Tunable(small_matmul().factory, {"mr": [4]}, default=lambda target: None).default_config(TARGET)
    fitted = tvm.tune.tunable(mr=[4, 8], fits=lambda c, t: c["mr"] == 8)(lambda mr: mr)
    assert fitted.configs(tvm.target.Target(TARGET)) == [{"mr": 8}]


def test_a_database_given_as_a_path_keeps_the_result(tmp_path):
    a, b, ref = data(4)
    path = tmp_path / "tuning.json"
    result = tune_64(small_matmul(), a, b, ref, database=str(path), budget_s=0)
    records = json.loads(path.read_text())["records"]
    assert [r["config"] for r in records.values()] == [result.best_config]


def test_the_target_helpers_read_a_target_string_as_the_target_it_names():
    from tvm.tune import device_limits, isa_features

    for text in ("c -mcpu=haswell", "c -mcpu=skylake-avx512", "opencl"):
        target = tvm.target.Target(text)
        assert isa_features(text) == isa_features(target) and vector_lanes(text) == vector_lanes(target)
        assert device_fingerprint(text) == device_fingerprint(target)
    assert vector_lanes("c -mcpu=haswell") == 8
    assert device_limits("opencl") == device_limits(tvm.target.Target("opencl"))


def test_a_database_path_at_a_file_tune_never_wrote_leaves_the_file_alone(tmp_path):
    """TVM_TUNING_DATABASE pointed at a user's own file: it was renamed '.corrupt' by a plain
    tvm.compile. Only a damaged file tvm.tune wrote is set aside."""
    for text in ('{"theme": "dark"}\n', '{"a": 1}\n{"b": 2}\n', "{ not json"):
        mine = tmp_path / "settings.json"
        mine.write_text(text)
        for first in ("lookup", "store"):
            db = Database(mine)
            with pytest.warns(RuntimeWarning, match="is no tuning database .* left as it is"):
                if first == "lookup":
                    assert db.lookup("k", TARGET, "fp") is None
                db.store("k", TARGET, "fp", {"config": {"mr": 4}, "ms": 1.0})
            assert db.lookup("k", TARGET, "fp")["config"] == {"mr": 4}
            assert mine.read_text() == text and sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    damaged = tmp_path / "tuning.json"
    Database(damaged).store("k", TARGET, "fp", {"config": {"mr": 4}, "ms": 1.0})
    damaged.write_bytes(damaged.read_bytes()[:-20])
    with pytest.warns(RuntimeWarning, match="set aside as"):
        assert Database(damaged).lookup("k", TARGET, "fp") is None
    assert (tmp_path / "tuning.json.corrupt").exists()


def test_a_damaged_database_that_cannot_be_moved_is_said_to_stay(tmp_path, monkeypatch):
    damaged = tmp_path / "tuning.json"
    Database(damaged).store("k", TARGET, "fp", {"config": {"mr": 4}, "ms": 1.0})
    damaged.write_bytes(damaged.read_bytes()[:-20])
    text = damaged.read_text()

    def read_only(src, dst):
        raise OSError(30, "Read-only file system", str(src))

    monkeypatch.setattr("os.replace", read_only)
    with pytest.warns(
        RuntimeWarning, match=r"unreadable .*; left where it is \(Read-only file system\), starting empty"
    ):
        assert Database(damaged).lookup("k", TARGET, "fp") is None
    assert damaged.read_text() == text


def partial_add(n: int) -> Tunable:
    """C = A + B over n elements, where ``parts=4`` (faster) computes only the first quarter."""
    from tvm.script import tir as T

    def factory(parts, copy):
        @T.prim_func
        def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
            for i in range(n // parts):
                C[i] = A[i] + B[i]

        return add

    return Tunable(factory, {"parts": [1, 4], "copy": [0, 1, 2, 3]}, key="partial_add", default={"parts": 1, "copy": 0})


def test_a_configuration_that_leaves_output_unwritten_is_wrong_whatever_the_memory_held():
    """Each trial's outputs start as 0xFF bytes, then as zeros: memory a previous trial's output
    filled with the right answer used to let a configuration that writes a quarter pass."""
    a, b = np.arange(4096, dtype="float32"), np.ones(4096, "float32")
    result = tvm.tune.tune(
        partial_add(4096), TARGET, inputs=[a, b], outputs=[((4096,), "float32")], reference=a + b,
        database=Database(None), progress=False,
    )  # fmt: skip
    quarter = [t for t in result.trials if t["config"]["parts"] == 4]
    assert len(quarter) == 4 and all(t["error"] == "wrong result (differs from the reference)" for t in quarter)
    assert result.best_config["parts"] == 1


def test_a_record_serves_only_the_argument_shapes_it_was_tuned_for(tmp_path):
    """A key shared by two sizes (a factory's name) kept the record of one, which the other then
    used: the record stores the arguments' dtypes and shapes, and another signature falls back."""
    db = Database(tmp_path / "tuning.json")
    a, b = np.arange(64, dtype="float32"), np.ones(64, "float32")
    tvm.tune.tune(partial_add(64), TARGET, inputs=[a, b], outputs=[((64,), "float32")], reference=a + b,
                  database=db, progress=False)  # fmt: skip
    (record,) = db.records().values()
    assert record["signature"] == "float32[64], float32[64], float32[64]"
    target = tvm.target.Target(TARGET)
    db.store("partial_add", target, device_fingerprint(target), {**record, "config": {"parts": 4, "copy": 0}})
    with pytest.warns(
        UserWarning, match=r"tuned for arguments \(float32\[64\], .*\), the kernel takes \(float32\[96\]"
    ):
        func = partial_add(96).select(target, database=db)
    assert func.script() == partial_add(96).build({"parts": 1, "copy": 0}).script()


def test_a_record_the_target_cannot_run_or_the_factory_cannot_build_falls_back():
    target = tvm.target.Target(TARGET)

    def factory(mr, nr):
        if nr == 32:
            raise NotImplementedError("nr=32 is gone from this version of the kernel")
        return tunables.matmul_cpu(64, 64, 64, mr, nr)

    for fits, config, why in (
        (lambda c, t: c["mr"] == 4, {"mr": 8, "nr": 16}, "does not fit the devices of c"),
        (None, {"mr": 4, "nr": 32}, r"does not build \(NotImplementedError: nr=32 is gone"),
    ):
        kernel = Tunable(factory, {"mr": [4, 8], "nr": [16, 32]}, key="mm", default={"mr": 4, "nr": 16}, fits=fits)
        db = Database(None)
        db.store("mm", target, device_fingerprint(target), {"config": config, "ms": 1.0})
        with pytest.warns(UserWarning, match=why + ".*its default configuration is used"):
            func = kernel.select(target, database=db)
        assert func.script() == kernel.build({"mr": 4, "nr": 16}).script()


def test_odd_factories_knobs_tolerances_and_database_files(tmp_path):
    """An IRModule of one function tunes as it compiles; NaN knob choices and tolerances that
    are no finite non-negative numbers are refused by name; a file of zeros a crash left is an
    empty database; a database path that is a symlink is written through."""
    a = np.random.default_rng(8).random((64, 64), dtype="float32")
    e = np.exp(a - a.max(1, keepdims=True))
    module = Tunable(
        lambda lanes: tvm.IRModule({"row_softmax": tunables.softmax_cpu(64, 64, lanes)}), {"lanes": [4, 8]}
    )
    tune = lambda kernel, **kw: tvm.tune.tune(  # noqa: E731
        kernel, TARGET, inputs=[a], reference=e / e.sum(1, keepdims=True), progress=False,
        **{"outputs": [((64, 64), "float32")], "database": Database(None), **kw},
    )  # fmt: skip
    assert all("ms" in t for t in tune(module).trials)
    with pytest.raises(ValueError, match="knob 'x': choice nan cannot be stored"):
        Tunable(lambda x: x, {"x": [float("nan"), 8.0]})
    for bad in ({"rtol": float("nan")}, {"atol": -1.0}, {"rtol": "1e-3"}):
        with pytest.raises(ValueError, match="tvm.tune: [ra]tol must be a finite number >= 0"):
            tune(module, **bad)
    with pytest.raises(TypeError, match="outputs must be a list of \\(shape, dtype\\)"):
        tune(module, outputs=None)
    zeros = tmp_path / "zeros.json"
    zeros.write_bytes(bytes(4096))
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("")
    link.symlink_to(real)
    for path in (zeros, link):
        tune(module, database=Database(path), budget_s=0)
        assert len(json.loads(path.read_text())["records"]) == 1
    assert link.is_symlink() and json.loads(real.read_text())["records"]
    assert (tmp_path / "real.json.lock").exists() and not (tmp_path / "link.json.lock").exists()
    real.write_text('{"format": 1, "records": {"truncated')  # the file the link names is damaged
    with pytest.warns(RuntimeWarning, match="set aside as .*real.json.corrupt"):
        assert Database(link).records() == {}
    assert link.is_symlink() and (tmp_path / "real.json.corrupt").is_file()
