"""Every input bounded before the work starts, and SIGHUP handled (docs/data-formats.md#limits,
docs/results-and-tracking.md#interruptions-concurrent-runs-and-damaged-stores).

A hostile file or value is exit 2 with one short line, at once: a YAML alias bomb, /dev/zero or a
FIFO as the config, a number beyond its bound (each bound checked at its edge), a megabyte name
in a jobs table, a megabyte value quoted in a message. The cases that would exhaust memory or
never end on a regression run in a subprocess under a memory cap (RLIMIT_AS) and a timeout, so a
regression fails the test instead of taking the machine down. SIGHUP is sent to a real process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from atlas_data.errors import InputError
from cli_checks import exit_2_one_line

pytestmark = pytest.mark.usefixtures("figures_unrendered")  # no test here looks at a figure its commands draw (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
MEMORY_CAP = 2 * 1024**3  # bytes of address space for a child that might blow up on a regression


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _child(code: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run Python `code` with this checkout's packages, under the memory cap and a timeout."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update({"PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_capped)


# ----- 1. YAML: alias bombs, depth, size ------------------------------------------------------------
def _bomb(levels: int = 9) -> str:
    """A "billion laughs" value: 9 aliases to 9 aliases ... (9^levels values), a few hundred bytes."""
    text = "&a0 [x, x, x, x, x, x, x, x, x]"
    for i in range(1, levels):
        text = f"&a{i} [{text}, " + ", ".join([f"*a{i - 1}"] * 8) + "]"
    return text


@pytest.mark.parametrize("place", ["options: {prr-lambda: BOMB}", "policies: [BOMB]", "jobs: BOMB"])
def test_an_alias_bomb_is_refused_at_once_with_a_short_line(tmp_path, place):
    # before: 34 s then MemoryError (exit 1) in options; a 226 MB "one line" in policies or jobs
    config = tmp_path / "bomb.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\n" + place.replace("BOMB", _bomb()) + "\n")
    child = _child(f"""
        import sys, time
        from atlas_data.errors import InputError
        from benchmark.cli import main
        from benchmark.sweeps.config import load_config
        started = time.perf_counter()  # the reading alone: the machine may be busy starting Python
        try:
            load_config({str(config)!r})
        except InputError:
            print(f"{{time.perf_counter() - started:.3f}}")
        sys.exit(main(["sweep", {str(config)!r}, "--no-mlflow", "--output", "out"]))
        """, tmp_path, timeout=60)
    err = child.stderr.strip().splitlines()
    assert child.returncode == 2, child.stderr[-2000:]
    assert len(err) == 1 and len(err[0]) < 400, err
    assert err[0].startswith(f"error: {config}: line 3, column ") and "more than 100,000 values once aliases are expanded" in err[0]
    assert float(child.stdout.strip()) < 2.0
    assert not (tmp_path / "out").exists()


def test_the_value_budget_counts_every_alias_as_what_it_names(monkeypatch):
    import atlas_data.yamlio as yamlio

    monkeypatch.setattr(yamlio, "MAX_YAML_NODES", 20)
    # mapping + key a + list + 3 items = 6; key b + list + 3 aliases x 4 values = 14: 20 in all
    text = "a: &x [1, 2, 3]\nb: [*x, *x, *x]\n"
    assert yamlio.load_yaml(text, "f.yaml") == {"a": [1, 2, 3], "b": [[1, 2, 3]] * 3}
    with pytest.raises(InputError, match=r"^f\.yaml: line 2, column 17: not valid YAML: more than 20 values"):
        yamlio.load_yaml(text.replace("*x]", "*x, 0]"), "f.yaml")  # one value more


def test_the_real_value_budget_at_its_edge():
    from atlas_data.yamlio import MAX_YAML_NODES, load_yaml

    assert MAX_YAML_NODES == 100_000

    def document(zeros: int) -> str:
        # mapping 1 + key a 1 + list 10 + key b 1 + list 1 + 9,998 aliases x 10 + zeros = 99,994 + zeros
        return "a: &x [" + ", ".join(["1"] * 9) + "]\nb: [" + ", ".join(["*x"] * 9_998 + ["0"] * zeros) + "]\n"

    assert len(load_yaml(document(6), "f.yaml")["b"]) == 9_998 + 6  # exactly 100,000 values
    with pytest.raises(InputError, match="more than 100,000 values"):
        load_yaml(document(7), "f.yaml")


@pytest.mark.parametrize("text, message", [
    ("a: &a [1, *a]\n", "alias *a refers to the node it is in (a recursive structure)"),
    ("a: " + "[" * 101 + "]" * 101 + "\n", "nested deeper than 100 levels"),
    # 60 levels, then an alias to them 50 levels down: 110 once expanded (PyYAML would build it recursively)
    ("a: &d " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*d" + "]" * 50 + "\n", "nested deeper than 100 levels"),
])
def test_recursive_and_too_deep_documents_are_refused(text, message):
    from atlas_data.yamlio import load_yaml

    with pytest.raises(InputError, match="not valid YAML: " + message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        load_yaml(text, "f.yaml")


def test_one_hundred_levels_are_accepted():
    from atlas_data.yamlio import load_yaml

    value = load_yaml("[" * 99 + "]" * 99 + "\n", "f.yaml")  # 99 lists + ... 100 levels with the innermost
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    assert depth == 98


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_a_config_that_is_not_a_regular_file_is_refused_before_it_is_read(tmp_path, kind):
    # before: /dev/zero was read until memory ran out, ignoring SIGTERM; a FIFO waited for a writer forever
    path = {"device": Path("/dev/zero"), "fifo": tmp_path / "config.yaml", "folder": tmp_path / "dir.yaml"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    started = time.monotonic()
    child = _child(f"""
        import sys
        from benchmark.cli import main
        sys.exit(main(["sweep", {str(path)!r}, "--no-mlflow", "--output", "out"]))
        """, tmp_path, timeout=30)
    assert time.monotonic() - started < 20
    err = child.stderr.strip().splitlines()
    assert child.returncode == 2 and len(err) == 1, child.stderr[-2000:]
    expected = ("is a folder, not a file (expected a sweep config)" if kind == "folder"
                else "is not a regular file (a device, FIFO or socket); give the sweep config as a file")
    assert err[0] == f"error: {path}: {expected}"


def test_a_config_beyond_one_megabyte_is_refused_before_it_is_read(tmp_path, capsys):
    from atlas_data.yamlio import MAX_YAML_BYTES, load_yaml_file

    body = "task: scheduling\nobjectives: [total_completion]\nmlflow: false\n"
    config = tmp_path / "big.yaml"
    config.write_text(body + "#" * (MAX_YAML_BYTES - len(body) - 1) + "\n")
    assert config.stat().st_size == MAX_YAML_BYTES
    assert load_yaml_file(config, "sweep config")["task"] == "scheduling"  # the limit itself is accepted
    with config.open("a") as fh:
        fh.write("\n")
    exit_2_one_line(capsys, ["sweep", config, "--output", tmp_path / "o"],
              f"error: {config}: 1,000,001 bytes is more than the 1,000,000 a sweep config may have")
    assert not (tmp_path / "o").exists()


def test_a_submission_file_goes_through_the_same_door(tmp_path):
    from leaderboards.validate import read_submission_yaml

    path = tmp_path / "submission.yaml"
    path.write_text(f"name: x\nauthors: {_bomb()}\n")
    with pytest.raises(InputError, match="more than 100,000 values once aliases are expanded"):
        read_submission_yaml(path)


# ----- 2. messages: one short line, the value as written -------------------------------------------
def test_an_error_quoting_a_megabyte_value_is_one_short_line():
    from atlas_data.errors import MAX_PART, one_line

    value = "v" * 1_000_000 + "\nsecond line"
    error = InputError(f"bad value {value!r} (a hint at the end)", path="f.yaml", where="key 'x'")
    text = str(error)
    assert "\n" not in text and len(text) <= MAX_PART + len("f.yaml: key 'x': ")
    assert text.startswith("f.yaml: key 'x': bad value 'vvvv") and text.endswith("second line' (a hint at the end)")
    assert "…" in text
    assert one_line("short\nand two") == "short and two"
    assert error.problem == one_line(f"bad value {value!r} (a hint at the end)")
    # a sentence naming two long paths (the fix to run) is not cut
    fix = f"move it aside: `mv /{'p' * 200}/mlflow.db /{'p' * 200}/mlflow.db.damaged` (readable with sqlite3)"
    assert one_line(fix) == fix


def test_a_huge_container_is_shown_without_building_its_repr():
    from atlas_data.errors import shown

    nested = [["x"] * 1000] * 1000
    started = time.perf_counter()
    text = shown([nested] * 1000)
    assert time.perf_counter() - started < 0.1
    assert len(text) <= 80 and text.startswith("[[['x', 'x'")


def test_an_argparse_error_quoting_a_megabyte_argument_is_one_short_line(capsys):
    exit_2_one_line(capsys, ["run", "--task", "scheduling", "--n", "z" * 1_000_000], "argument --n: not an integer: 'zzz")


@pytest.mark.parametrize("argv, message", [
    (["--lease", "1.0000001e12"], "argument --lease: '1.0000001e12' is too large: a time span in seconds is at most "
                                  "1,000,000,000,000 (docs/data-formats.md#limits)"),
    (["--lease", "1e400"], "argument --lease: '1e400' is too large"),  # was: "must be > 0, got inf"
    (["--interval", "nan"], "argument --interval: not a number: 'nan'"),
    (["--interval", "0"], "argument --interval: a time span in seconds must be > 0, got '0'"),
    (["--seed", "18446744073709551616"], "argument --seed: '18446744073709551616' is too large: a seed is at most "
                                         "2,147,483,647"),
    (["--n", "9" * 5000], "argument --n: '99999999999999999...999999999999999999' is too large"),
])
def test_an_out_of_range_value_is_quoted_as_written(capsys, tmp_path, argv, message):
    exit_2_one_line(capsys, ["run", "--task", "fairness", *argv, "--no-mlflow", "--output", tmp_path / "o"], message)
    assert not (tmp_path / "o").exists()


# ----- 3. every numeric bound at its edge ----------------------------------------------------------------
def _parse(argv):
    from benchmark.cli import build_parser

    return build_parser([argv[0]]).parse_args(argv)


def _refused(capsys, argv, fragment):
    from benchmark.cli import build_parser

    with pytest.raises(SystemExit) as info:
        build_parser([argv[0]]).parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


RUN = ["run", "--task", "fairness"]


@pytest.mark.parametrize("base, option, edge, over, dest, fragment", [
    (RUN, "--seed", "2147483647", "2147483648", "seed", "a seed is at most 2,147,483,647"),
    (RUN, "--n", "1000000000", "1000000001", "n", "a number of jobs is at most 1,000,000,000"),
    (RUN, "--lease", "1e12", "1000000000000.0002", "lease", "at most 1,000,000,000,000"),
    (RUN, "--interval", "1e12", "1.0000001e12", "interval", "at most 1,000,000,000,000"),
    (RUN, "--fair-window", "1e12", "1e13", "fair_window", "at most 1,000,000,000,000"),
    (RUN, "--cold-start", "1e12", "1e13", "cold_start", "at most 1,000,000,000,000"),
    (["run", "--task", "scheduling"], "--prr-lambda", "1", "1.0000001", "prr_lambda", "PRR's λ is at most 1"),
    (["run", "--task", "scheduling"], "--sample-seed", "2147483647", "2147483648", "sample_seed", "a seed is at most"),
    (["data", "synth", "--out", "x"], "--jobs", "2000000", "2000001", "jobs",
     "a number of synthetic jobs is at most 2,000,000"),
    (["data", "build", "--out", "x"], "--jobs", "2,000,000", "2,000,001", "jobs", "at most 2,000,000"),
    (["data", "synth", "--out", "x"], "--seed", "2147483647", "2147483648", "seed", "a seed is at most"),
    (["sweep", "c.yaml"], "--workers", "1024", "1025", "workers", "a number of workers is at most 1,024"),
    (["sweep", "c.yaml"], "--max-cells", "1000000", "1000001", "max_cells", "a number of cells is at most 1,000,000"),
    (["reproduce", "astraea"], "--n", "1000000000", "1000000001", "n", "a number of jobs is at most"),
    (["reproduce", "astraea"], "--workers", "1024", "1025", "workers", "at most 1,024"),
    (["reproduce", "atlas"], "--noise", "10", "10.000001", "noise", "a noise level σ is at most 10"),
    (["transfer"], "--min-jobs", "1000000000", "1000000001", "min_jobs", "at most 1,000,000,000"),
])
def test_each_bound_accepts_its_limit_and_refuses_beyond(capsys, base, option, edge, over, dest, fragment):
    parsed = _parse([*base, option, edge])
    assert float(getattr(parsed, dest)) == float(edge.replace(",", ""))
    _refused(capsys, [*base, option, over], fragment)


def test_the_low_ends_are_refused_by_the_same_types(capsys):
    _refused(capsys, [*RUN, "--n", "0"], "a number of jobs must be an integer >= 1, got '0'")
    _refused(capsys, [*RUN, "--seed", "-1"], "a seed must be an integer >= 0, got '-1'")
    _refused(capsys, [*RUN, "--lease=-1e400"], "must be > 0, got '-1e400'")
    assert _parse([*RUN, "--cold-start", "0"]).cold_start == 0.0


@pytest.mark.parametrize("convert, edge, over, fragment", [
    ("machine_count", "100000", "100001", "'100001' is too large: a machine count is at most 100,000"),
    ("noise_level", "10", "10.0000001", "'10.0000001' is too large: a noise level σ is at most 10"),
])
def test_list_items_are_bounded_by_the_same_rule(convert, edge, over, fragment):
    from benchmark.options import machine_count
    from benchmark.tasks.inputs import csv_list, noise_level

    function = {"machine_count": machine_count, "noise_level": noise_level}[convert]
    assert csv_list(f"1,{edge}", "machines", function) == [1, float(edge)]
    with pytest.raises(InputError) as info:
        csv_list(f"1,{over}", "machines", function)
    assert str(info.value) == f"--machines: {fragment} (docs/data-formats.md#limits)"


def _cli_child(argv, cwd: Path, timeout: float = 60) -> str:
    """`benchmark ARGV` in a capped child (a regression must not exhaust this machine): its one error line."""
    child = _child(f"import sys\nfrom benchmark.cli import main\nsys.exit(main({[str(a) for a in argv]!r}))\n",
                   cwd, timeout=timeout)
    err = child.stderr.strip().splitlines()
    assert child.returncode == 2 and len(err) == 1 and len(err[0]) < 1000, child.stderr[-2000:]
    return err[0]


def test_machines_beyond_the_bound_are_refused_before_any_job_is_read(tmp_path):
    # before: --machines 100000000 ran into a MemoryError
    line = _cli_child(["run", "--task", "scheduling", "--objective", "makespan", "--machines", "5,100000000",
                       "--no-mlflow", "--output", tmp_path / "o"], tmp_path)
    assert line.startswith("error: --machines: '100000000' is too large")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("key, fragment", [
    ("seeds: [2147483648]", "seeds: `benchmark run` rejects it: argument --seed: '2147483648' is too large"),
    ("n: [100000000000000000000000]", "n: `benchmark run` rejects it: argument --n: '100000000000000000000000' is too large"),
    ("machines: [100001]", "machines: '100001' is too large: a machine count is at most 100,000"),
    ("max_cells: 1000001", "max_cells: 'max_cells' is at most 1,000,000"),
])
def test_a_sweep_value_beyond_its_bound_is_refused_before_any_cell(tmp_path, capsys, key, fragment):
    # before: seeds [2**64] and n [1e23] ran every cell, then OverflowError, exit 1
    objective = "makespan" if key.startswith("machines") else "total_completion"
    config = tmp_path / "s.yaml"
    config.write_text(f"task: scheduling\nobjectives: [{objective}]\n{key}\nmlflow: false\n")
    exit_2_one_line(capsys, ["sweep", config, "--output", tmp_path / "o"], f"error: {config}: {fragment}")
    assert not (tmp_path / "o").exists()


def test_the_sweep_accepts_the_largest_seed(tmp_path):
    from benchmark.sweeps.config import cells, load_config

    config = tmp_path / "s.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\nseeds: [0, 2147483647]\nn: [1000000000]\n")
    assert [c.seed for c in cells(load_config(config))] == [0, 2147483647]


def test_the_time_bound_is_the_jobs_tables():
    from atlas_data.jobs_table import MAX_SECONDS
    from benchmark import options

    assert options.MAX_SECONDS == MAX_SECONDS


def test_the_api_applies_the_command_lines_bounds():
    from benchmark import api

    with pytest.raises(ValueError, match=r"fairness\(\): lease: '10000000000000.0' is too large"):
        api.fairness(None, scenario="venus", lease=1e13)
    with pytest.raises(ValueError, match=r"fairness\(\): n: a number of jobs must be an integer >= 1"):
        api.fairness(None, scenario="venus", n=0)


# ----- 4. names in a jobs table ------------------------------------------------------------------------
@pytest.mark.parametrize("column", ["tenant", "job_id"])
def test_a_name_longer_than_256_characters_is_refused_naming_file_row_and_column(column):
    from atlas_data.jobs_table import MAX_NAME_CHARS, validate_jobs

    assert MAX_NAME_CHARS == 256
    frame = pd.DataFrame({"job_id": [f"j{i}" for i in range(10)], "submit_time": range(10), "duration": [5.0] * 10,
                          "tenant": ["a"] * 10})
    frame.loc[7, column] = "n" * 256
    assert validate_jobs(frame, "t.csv")[column].iloc[7] == "n" * 256
    frame.loc[7, column] = " " + "n" * 257 + " "
    with pytest.raises(InputError) as info:
        validate_jobs(frame, "t.csv")
    assert str(info.value) == (f"t.csv: row 8: {column} is 257 characters long, more than the 256 allowed "
                               "(docs/data-formats.md#limits)")


def test_a_megabyte_tenant_name_is_refused_at_once(tmp_path):
    # before: the run went on for minutes
    n = 2000
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": [f"j{i}" for i in range(n)], "submit_time": range(n), "duration": [5.0] * n,
                  "tenant": ["t" * 1_000_000 if i == 7 else "a" for i in range(n)]}).to_csv(path, index=False)
    line = _cli_child(["run", "--task", "fairness", "--jobs", path, "--no-mlflow", "--output", tmp_path / "o"], tmp_path,
                      timeout=30)
    assert line.startswith(f"error: {path}: row 8 (line 9): tenant is 1,000,000 characters long, more than the 256 allowed")
    assert not (tmp_path / "o").exists()


def test_submission_authors_url_and_description_are_bounded():
    from leaderboards.schema import Submission

    good = {"name": "m", "authors": ["a" * 200], "description": "d" * 10_000, "url": "https://x.org/" + "p" * 1986,
            "track": "prediction", "dataset_fingerprint": "0" * 64}
    assert Submission.from_mapping(dict(good), "s.yaml").authors == ("a" * 200,)
    for key, value, message in (("authors", ["a" * 201], "s.yaml: key 'authors': at most 100 authors of at most 200"),
                                ("authors", ["a"] * 101, "s.yaml: key 'authors': at most 100 authors"),
                                ("description", "d" * 10_001, "s.yaml: key 'description': at most 10,000 characters"),
                                ("url", good["url"] + "p", "s.yaml: key 'url': at most 2,000 characters")):
        with pytest.raises(InputError) as info:
            Submission.from_mapping({**good, key: value}, "s.yaml")
        assert str(info.value).startswith(message)


# ----- 5. SIGHUP ----------------------------------------------------------------------------------------
def test_sighup_stops_a_sweep_cleanly_with_one_line(tmp_path):
    # before: SIGHUP killed the process outright (its default action): no line, a temporary folder left
    config = tmp_path / "s.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\npolicies: [srpt]\nseeds: [0, 1, 2, 3, 4, 5]\n"
                      "n: [200]\nmlflow: false\n")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update({"PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"})
    proc = subprocess.Popen([sys.executable, "-c", "from benchmark.cli import entry; entry()", "sweep", str(config),
                             "--output", str(out), "--workers", "1", "--quiet"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".out.tmp-") for p in tmp_path.iterdir()):  # the sweep is writing
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.3)
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert err.strip().splitlines() == ["terminated (SIGHUP)"]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]  # no temporary folder left


def test_sighup_is_held_and_restored_like_sigterm():
    from benchmark.interrupts import deferred_signals, terminate_as_interrupt

    # as in a terminal (a suite started under nohup inherits SIGHUP ignored: the next test's case)
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        _sighup_held_and_restored(terminate_as_interrupt, deferred_signals)
    finally:
        signal.signal(signal.SIGHUP, before)


def _sighup_held_and_restored(terminate_as_interrupt, deferred_signals):
    with terminate_as_interrupt():
        assert signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL
        with pytest.raises(KeyboardInterrupt, match="SIGHUP"):
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(0.05)  # held: nothing raised inside the section
        with pytest.raises(KeyboardInterrupt, match="SIGHUP"):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(1)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL


def test_sighup_stays_ignored_under_nohup():
    from benchmark.interrupts import terminate_as_interrupt

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with terminate_as_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
