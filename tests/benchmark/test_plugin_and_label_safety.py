"""Nothing lost, nothing hangs (issue 28): plugins cannot fake success, wrong labels are refused, the
oracle's p̂ floor is said, and the remaining exit-1 cases are one line with exit 2.

- Plugin code that calls sys.exit(0) (at import, in fit, predict, a policy's constructor, reset or
  allocate), raises GeneratorExit, raises KeyboardInterrupt itself, or raises any error: exit 2,
  one line naming the plugin — never exit 0 having done nothing. A real SIGINT/SIGTERM while a
  plugin runs is still an interrupt (130); interrupts outside plugin code are covered by
  tests/benchmark/test_interrupts.py and test_fault_injection.py.
- A dataset whose y is not log1p(p_star), or whose card lists a label as a feature: exit 2.
- A card without a fingerprint: the content hash is computed (and the prediction cache keyed on it).
- Ids in parquet that are lists or non-UTF-8 bytes; a --address Dask cannot dial: exit 2.
"""

from __future__ import annotations

import json
import signal
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmark.cli import main
from predictors.synthetic import make_frame, write_dataset

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

PLUGIN = """
    import sys
    import numpy as np
    from sklearn.base import BaseEstimator, RegressorMixin
    from schedulers.policy import Allocation, Policy

    class ExitInFit(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            sys.exit(0)
        def predict(self, X):
            return np.zeros(len(X))

    class ExitInPredict(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            return self
        def predict(self, X):
            sys.exit(0)

    class InterruptInFit(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            raise KeyboardInterrupt
        def predict(self, X):
            return np.zeros(len(X))

    class ErrorInPredict(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            return self
        def predict(self, X):
            raise LookupError("no such table")

    class GeneratorExitInFit(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            raise GeneratorExit
        def predict(self, X):
            return np.zeros(len(X))

    class SignalInFit(RegressorMixin, BaseEstimator):
        '''A real signal arriving while the plugin runs (as a Ctrl-C would).'''
        sig = None
        def fit(self, X, y):
            import os, time
            os.kill(os.getpid(), self.sig)
            time.sleep(5)
            return self
        def predict(self, X):
            return np.zeros(len(X))

    class SigintInFit(SignalInFit):
        import signal as _s
        sig = _s.SIGINT

    class SigtermInFit(SignalInFit):
        import signal as _s
        sig = _s.SIGTERM

    class ExitInAllocate(Policy):
        name = "exit-in-allocate"
        def allocate(self, view):
            sys.exit(0)

    class ExitInConstructor(Policy):
        name = "exit-in-constructor"
        def __init__(self):
            sys.exit(3)

    class InterruptInReset(Policy):
        name = "interrupt-in-reset"
        def reset(self, view):
            raise KeyboardInterrupt("pretending")
"""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A small dataset built the normal way (800 jobs, 120 test jobs) and its frame."""
    folder = tmp_path_factory.mktemp("data") / "ds"
    frame = make_frame(800, seed=3)
    write_dataset(frame, folder)
    return folder, frame


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder holding the plugin module (`plug_safety.py`) and a two-job jobs table."""
    import schedulers.policy
    import schedulers.policy_base

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    schedulers.policy.policy_names()  # the built-ins first, into the real registry
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))
    (tmp_path / "plug_safety.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "plug_exit_at_import.py").write_text("import sys\nsys.exit(0)\n")
    pd.DataFrame({"job_id": [1, 2], "submit_time": [0, 1], "duration": [3, 4]}).to_csv("jobs.csv", index=False)
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("plug_")]:
        del sys.modules[name]


def _prediction(ds, methods, *extra):
    return ["run", "--task", "prediction", "--data", str(ds), "--methods", methods, "--output", "out", "--no-mlflow",
            "--quiet", *extra]


def _scheduling(policies):
    return ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "jobs.csv", "--no-mlflow",
            "--quiet", "--output", "out", "--policies", policies]


PLUGIN_CASES = [
    # (id, argv maker, what the line must say)
    ("exit-at-import", lambda ds: _prediction(ds, "plug_exit_at_import:Model"),
     "method 'plug_exit_at_import:Model': importing module 'plug_exit_at_import' called sys.exit(0)"),
    ("exit-at-import-plugins-file", lambda ds: _prediction(ds, "constant", "--plugins", "plug_exit_at_import.py"),
     "--plugins: plugin file 'plug_exit_at_import.py' called sys.exit(0)"),
    ("exit-in-fit", lambda ds: _prediction(ds, "plug_safety:ExitInFit"), "method 'plug_safety:ExitInFit' called sys.exit(0)"),
    ("exit-in-predict", lambda ds: _prediction(ds, "plug_safety:ExitInPredict"),
     "method 'plug_safety:ExitInPredict' called sys.exit(0)"),
    ("keyboard-interrupt-in-fit", lambda ds: _prediction(ds, "plug_safety:InterruptInFit"),
     "method 'plug_safety:InterruptInFit' raised KeyboardInterrupt itself (no signal was received)"),
    ("generator-exit-in-fit", lambda ds: _prediction(ds, "plug_safety:GeneratorExitInFit"),
     "method 'plug_safety:GeneratorExitInFit' raised GeneratorExit"),
    ("error-in-predict", lambda ds: _prediction(ds, "plug_safety:ErrorInPredict"),
     "method 'plug_safety:ErrorInPredict' raised LookupError: no such table"),
    ("exit-in-allocate", lambda ds: _scheduling("plug_safety:ExitInAllocate"),
     "policy 'exit-in-allocate' (plug_safety.ExitInAllocate) called sys.exit(0)"),
    ("exit-in-constructor", lambda ds: _scheduling("plug_safety:ExitInConstructor"),
     "policy 'exit-in-constructor' (plug_safety.ExitInConstructor) called sys.exit(3)"),
    ("keyboard-interrupt-in-reset", lambda ds: _scheduling("plug_safety:InterruptInReset"),
     "policy 'interrupt-in-reset' (plug_safety.InterruptInReset) raised KeyboardInterrupt itself (no signal was "
     "received): pretending"),
]


@pytest.mark.parametrize("argv, said", [c[1:] for c in PLUGIN_CASES], ids=[c[0] for c in PLUGIN_CASES])
def test_plugin_code_cannot_end_the_command_as_a_success(workdir, dataset, one_error, argv, said):
    """sys.exit(0) in a plugin made `benchmark run` exit 0 having written nothing; a KeyboardInterrupt
    it raised itself passed for a Ctrl-C (130). Now: exit 2, one line naming the plugin, no output."""
    line = one_error(argv(dataset[0]))
    assert line.startswith("error: ") and said in line, line
    assert "internal error" not in line and not (workdir / "out").exists()


@pytest.mark.parametrize("model, sig", [("SigintInFit", signal.SIGINT), ("SigtermInFit", signal.SIGTERM)])
def test_a_real_signal_while_a_plugin_runs_is_still_an_interrupt(workdir, dataset, capsys, model, sig):
    """The signal lands inside the plugin's fit: the KeyboardInterrupt is the signal's, so exit 130."""
    # the command turns SIGTERM into an interrupt only where nobody handles it yet (else it would end pytest)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    code = main(_prediction(dataset[0], f"plug_safety:{model}"))
    err = capsys.readouterr().err
    assert code == 130, err
    assert err.strip().splitlines()[-1] == ("terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted")
    assert not (workdir / "out").exists()


def test_outside_the_command_line_a_plugin_keyboard_interrupt_stays_one(workdir, dataset):
    """From Python (a notebook), nobody records signals: a KeyboardInterrupt is taken for a Ctrl-C."""
    from predictors.api import predict_test

    main(_prediction(dataset[0], "constant"))  # the command line ran in this process: its judge stays set
    with pytest.raises(KeyboardInterrupt):
        predict_test(dataset[0], "plug_safety:InterruptInFit", cache=False)


# ----- labels -----------------------------------------------------------------------------------
def _edited(tmp_path, frame, edit, *, fingerprint: bool = True):
    """The dataset written the normal way, then `edit(frame)` applied to its parquet; its card's
    fingerprint recomputed (as a careful hand edit would) or removed."""
    from atlas_data.build import content_fingerprint

    folder = tmp_path / "edited"
    write_dataset(frame, folder)
    df = pd.read_parquet(folder / "atlas.parquet")
    edit(df)
    df.to_parquet(folder / "atlas.parquet", index=False)
    card = json.loads((folder / "dataset.json").read_text())
    if fingerprint:
        card["fingerprint"] = content_fingerprint(df)
    else:
        card.pop("fingerprint"), card.pop("fingerprint_kind")
    (folder / "dataset.json").write_text(json.dumps(card))
    return folder


@pytest.mark.parametrize("fingerprint", [True, False], ids=["fingerprint-updated", "no-fingerprint"])
@pytest.mark.parametrize("task", ["prediction", "scheduling"])
def test_a_label_that_is_not_log1p_p_star_is_refused(tmp_path, monkeypatch, dataset, one_error, fingerprint, task):
    """Every method was scored on the wrong label. Row 37 of the file gets y + 0.5."""
    monkeypatch.chdir(tmp_path)
    def edit(df):
        df.loc[36, "y"] += 0.5

    folder = _edited(tmp_path, dataset[1], edit, fingerprint=fingerprint)
    df = pd.read_parquet(folder / "atlas.parquet")
    p = df.loc[36, "p_star"]
    argv = (_prediction(folder, "constant") if task == "prediction" else
            ["run", "--task", "scheduling", "--objective", "total_completion", "--data", str(folder), "--predictor",
             "constant", "--no-mlflow", "--quiet", "--output", "out"])
    line = one_error(argv)
    assert line.startswith(f"error: {folder / 'atlas.parquet'}: row 37: y = {np.log1p(p) + 0.5:.9g} but log1p(p_star) "
                           f"= log1p({p:.9g}) = {np.log1p(p):.9g}"), line
    assert not (tmp_path / "out").exists() and not (folder / "predictions").exists()


def test_a_label_stored_as_float32_is_still_accepted(tmp_path, dataset):
    """Another writer's float32 y differs from log1p(p_star) in the 8th digit: within the tolerance."""
    from atlas_data.build import load_dataset

    def edit(df):
        df["y"] = df["y"].astype(np.float32)

    frame, _ = load_dataset(_edited(tmp_path, dataset[1], edit))
    assert frame["y"].dtype == np.float32 and len(frame) == 800


def test_a_card_without_fingerprint_gets_the_content_hash_and_caches_on_it(tmp_path, dataset, capsys):
    """Decision: computed, not refused (a hand-made dataset is fine); the card on disk is left alone.
    The prediction cache is keyed on the computed hash, so editing the data refits instead of
    serving the old predictions (a cache keyed on "no fingerprint" would have been served)."""
    from atlas_data.build import content_fingerprint, load_dataset

    folder = _edited(tmp_path, dataset[1], lambda df: None, fingerprint=False)
    _, card = load_dataset(folder)
    assert card["fingerprint"] == content_fingerprint(pd.read_parquet(folder / "atlas.parquet"))
    assert card["fingerprint_computed"] is True
    assert "fingerprint" not in json.loads((folder / "dataset.json").read_text())
    argv = ["run", "--task", "prediction", "--data", str(folder), "--methods", "constant", "--no-mlflow"]
    assert main(argv + ["--output", str(tmp_path / "a")]) == 0
    assert main(argv + ["--output", str(tmp_path / "b")]) == 0
    assert "reused the cached fit of constant" in capsys.readouterr().err
    doc = json.loads((tmp_path / "b" / "results.json").read_text())
    assert doc["dataset"]["fingerprint"] == card["fingerprint"]
    df = pd.read_parquet(folder / "atlas.parquet")
    train = df["split"] == "train"
    df.loc[train, "p_star"] *= 2  # another dataset under the same (absent) fingerprint
    df["y"] = np.log1p(df["p_star"])
    df.to_parquet(folder / "atlas.parquet", index=False)
    assert main(argv + ["--output", str(tmp_path / "c")]) == 0
    assert "reused" not in capsys.readouterr().err
    first = pd.read_parquet(tmp_path / "b" / "predictions" / "constant.parquet")["p_hat"].iloc[0]
    again = pd.read_parquet(tmp_path / "c" / "predictions" / "constant.parquet")["p_hat"].iloc[0]
    assert again == pytest.approx(2 * first, rel=0.05)  # the train median doubled: refitted on the new data


@pytest.mark.parametrize("features, said", [
    (["log_cpu", "p_star"], "features: 'p_star' is a label (the true duration), never a feature"),
    (["log_cpu", "y"], "features: 'y' is a label (the true duration), never a feature"),
    (["split", "log_cpu"], "features: 'split' is the split, never a feature"),
    (["log_cpu", "log_cpu"], "features: 'log_cpu' is listed twice"),
    ("log_cpu", "features: must be a list of column names"),
])
def test_a_card_listing_a_label_as_a_feature_is_refused(tmp_path, monkeypatch, dataset, one_error, features, said):
    """p_star in the card's features was a ValueError (exit 1) deep in the predictor; a leak guard."""
    monkeypatch.chdir(tmp_path)
    folder = _edited(tmp_path, dataset[1], lambda df: None)
    card = json.loads((folder / "dataset.json").read_text())
    card["features"] = features
    (folder / "dataset.json").write_text(json.dumps(card))
    line = one_error(_prediction(folder, "constant"))
    assert line == f"error: {folder / 'dataset.json'}: {said}" + (": remove it from the list" if "never" in said else "")


# ----- the oracle's floor -----------------------------------------------------------------------
def test_the_oracle_floor_on_sub_millisecond_jobs_is_said(tmp_path, dataset, capsys):
    """p̂ ≥ 1 ms for every method: the oracle's Cov@25 on 7 jobs of 0.2 ms is 0, which was silent."""
    frame = dataset[1].copy()
    test = np.flatnonzero(frame["split"].to_numpy() == "test")
    frame.loc[frame.index[test[:7]], "p_star"] = 2e-4
    frame["y"] = np.log1p(frame["p_star"])
    write_dataset(frame, tmp_path / "subms")
    out = tmp_path / "out"
    assert main(["run", "--task", "prediction", "--data", str(tmp_path / "subms"), "--methods", "constant,oracle",
                 "--no-mlflow", "--output", str(out)]) == 0
    notes = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if "note:" in line]
    assert notes == ["[prediction methods] note: oracle: p̂ of 7 of 120 test jobs raised to the floor of 1 ms (their "
                     "p* is shorter), so its Cov@25/Cov@50/RMSLE are not those of p̂ = p"]
    rows = {r["method"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert rows["oracle"]["p_hat_floored_jobs"] == 7 and "p_hat_floored_jobs" not in rows["constant"]
    assert rows["oracle"]["cov25"] == pytest.approx(113 / 120)
    # without sub-millisecond jobs: no note, no field, and the oracle is exact
    assert main(["run", "--task", "prediction", "--data", str(dataset[0]), "--methods", "oracle", "--no-mlflow",
                 "--output", str(tmp_path / "plain")]) == 0
    assert "note:" not in capsys.readouterr().err
    row = json.loads((tmp_path / "plain" / "results.json").read_text())["rows"][0]
    assert row["cov25"] == 1.0 and "p_hat_floored_jobs" not in row


# ----- ids in parquet, --address ----------------------------------------------------------------
def _parquet(path, ids):
    pq.write_table(pa.table({"job_id": ids, "submit_time": [0.0, 1.0, 2.0], "duration": [3.0, 4.0, 5.0]}), path)
    return path


@pytest.mark.parametrize("ids, said", [
    (pa.array([b"a", b"\xff\xfe", b"c"], pa.binary()), "row 2: job_id holds bytes that are not UTF-8 text (b'\\xff\\xfe')"),
    (pa.array([[1], [2], [3]]), "row 1: job_id holds a list ([1]), not one id: ids are text or integers"),
    (pa.array([{"a": 1}, {"a": 2}, {"a": 3}]), "row 1: job_id holds a dict ({'a': 1}), not one id"),
], ids=["non-utf8-bytes", "list", "struct"])
def test_ids_that_are_not_single_values_are_refused(tmp_path, one_error, ids, said):
    """Non-UTF-8 bytes were a UnicodeDecodeError (exit 1); a list id became the text "[1]" silently."""
    path = _parquet(tmp_path / "jobs.parquet", ids)
    line = one_error(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(path),
                      "--policies", "fifo", "--no-mlflow", "--quiet", "--output", str(tmp_path / "out")])
    assert line.startswith(f"error: {path}: {said}"), line
    assert not (tmp_path / "out").exists()


def test_utf8_bytes_ids_are_their_text(tmp_path):
    path = _parquet(tmp_path / "jobs.parquet", pa.array([b"a", b"\xc3\xa9", b"c"], pa.binary()))
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(path), "--policies",
                 "fifo", "--no-mlflow", "--quiet", "--output", str(tmp_path / "out")]) == 0
    assert pd.read_parquet(tmp_path / "out" / "per_job.parquet")["job_id"].tolist() == ["a", "é", "c"]


def test_a_dataset_with_list_ids_is_refused(tmp_path, monkeypatch, dataset, one_error):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "ds"
    write_dataset(dataset[1], folder)
    table = pq.read_table(folder / "atlas.parquet")
    ids = pa.array([[i] for i in range(table.num_rows)])
    table = table.set_column(table.schema.get_field_index("job_id"), "job_id", ids).replace_schema_metadata(None)
    pq.write_table(table, folder / "atlas.parquet")  # no pandas metadata (that says "strings")
    card = json.loads((folder / "dataset.json").read_text())
    card.pop("fingerprint"), card.pop("fingerprint_kind")
    (folder / "dataset.json").write_text(json.dumps(card))
    line = one_error(_prediction(folder, "constant"))
    assert line == f"error: {folder / 'atlas.parquet'}: row 1: job_id holds a list ([0]), not one id: ids are text or integers"


@pytest.mark.parametrize("address, said", [
    ("not a url", "'not a url' is not a Dask scheduler address (missing port number in address 'not a url')"),
    ("http://x:1", "'http://x:1' is not a Dask scheduler address (unknown address scheme 'http'"),
    ("tcp://127.0.0.1:port", "'tcp://127.0.0.1:port' is not a Dask scheduler address"),
    ("tcp://h:0", "'tcp://h:0' is not a Dask scheduler address (host 'h', port 0)"),
    ("", "the address is empty"),  # was: silently a local cluster
])
@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_an_address_dask_cannot_dial_is_one_line_before_any_work(tmp_path, one_error, address, said, command):
    """Was an internal error (ValueError, exit 1) after the sweep's progress bar had started."""
    config = tmp_path / "sweep.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\njobs: jobs.csv\npolicies: [fifo]\n")
    head = ["sweep", str(config)] if command == "sweep" else ["reproduce", "astraea"]
    line = one_error(head + ["--executor", "dask", "--address", address, "--output", str(tmp_path / "out")])
    assert line.startswith(f"error: --address: {said}"), line
    assert not (tmp_path / "out").exists()
