"""A cached synthetic dataset's first build reports each step on stderr; a cached one is silent."""

import re

from atlas_data import named
from atlas_data.build import BUILD_STEPS


def test_first_build_prints_one_line_per_step_then_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(named.NAMED_DATASETS, "tiny", {"jobs": 1200, "seed": 2})
    folder = named.resolve_dataset("tiny", quiet=False)
    captured = capsys.readouterr()
    assert captured.out == ""  # progress never mixes with results on stdout
    lines = captured.err.splitlines()
    assert lines[0].startswith("[tiny dataset] building 1,200 synthetic jobs (seed 2) once into ")
    assert str(folder) in lines[0]
    steps = [int(m.group(1)) for m in (re.match(r"\[tiny dataset (\d)/%d\] " % BUILD_STEPS, line) for line in lines[1:]) if m]
    assert steps == list(range(1, BUILD_STEPS + 1))  # every step once, in order, the write last
    assert "synthesised 1,200 jobs" in lines[1] and "written:" in lines[-1]

    assert named.resolve_dataset("tiny", quiet=False) == folder
    assert capsys.readouterr().err == ""  # cached: nothing to report


def test_quiet_build_prints_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(named.NAMED_DATASETS, "tiny", {"jobs": 1200, "seed": 2})
    assert (named.resolve_dataset("tiny", quiet=True) / "atlas.parquet").is_file()
    assert capsys.readouterr().err == ""
