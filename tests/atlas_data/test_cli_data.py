"""`benchmark data synth | build | describe` end to end on small traces, and the dataset API."""

import json

import pandas as pd
import pytest

from atlas_data.build import build_dataset, default_dataset_dir, ensure_default_dataset, load_dataset
from atlas_data.errors import InputError
from atlas_data.outputs import file_signature
from benchmark.cli import main

CONTRACT_KEYS = {"source", "counts", "features", "splits", "fingerprint"}


def test_synth_build_describe(tmp_path, capsys):
    raw, ds = tmp_path / "raw", tmp_path / "ds"
    assert main(["data", "synth", "--jobs", "2500", "--seed", "5", "--out", str(raw), "--quiet"]) == 0
    assert main(["data", "build", "--source", "pai", "--raw-dir", str(raw), "--out", str(ds), "--quiet"]) == 0
    card = json.loads((ds / "dataset.json").read_text())
    assert CONTRACT_KEYS <= set(card)
    assert set(card["counts"]) >= {"kept", "dropped", "train", "val", "test"}
    assert card["counts"]["kept"] == card["counts"]["train"] + card["counts"]["val"] + card["counts"]["test"]
    assert set(card["splits"]) == {"train", "val", "test"}
    capsys.readouterr()
    assert main(["data", "describe", str(ds)]) == 0
    out = capsys.readouterr().out
    for needle in ("jobs kept", "calibration", "test_recurrent_share", "p_star_skew", "top features", "train"):
        assert needle in out
    assert (ds / "durations.png").stat().st_size > 1000
    assert (ds / "durations.svg").read_text().startswith("<?xml")
    # --output FILE.png: the SVG goes beside it, signed like the PNG; a user's SVG there is refused
    figure = tmp_path / "figs" / "d.png"
    assert main(["data", "describe", str(ds), "--output", str(figure)]) == 0
    assert file_signature(figure) == "data describe" == file_signature(figure.with_suffix(".svg"))
    assert main(["data", "describe", str(ds), "--output", str(figure)]) == 0  # a rerun replaces both
    mine = tmp_path / "figs" / "mine.svg"
    mine.write_text("<svg/>")
    capsys.readouterr()
    assert main(["data", "describe", str(ds), "--output", str(mine.with_suffix(".png"))]) == 2
    assert "mine.svg" in capsys.readouterr().err and mine.read_text() == "<svg/>"
    assert not mine.with_suffix(".png").exists()

    # synth + build in one gives the same dataset as synth then build from the CSVs
    ds2 = tmp_path / "ds2"
    assert main(["data", "build", "--source", "synthetic", "--jobs", "2500", "--seed", "5", "--out", str(ds2),
                 "--quiet"]) == 0
    card2 = json.loads((ds2 / "dataset.json").read_text())
    assert card2["fingerprint"] == card["fingerprint"]


def test_load_dataset_contract_and_tamper_check(tmp_path):
    ds = tmp_path / "ds"
    card = build_dataset(ds, source="synthetic", jobs=1500, seed=2)
    df, card2 = load_dataset(ds)
    assert card2["fingerprint"] == card["fingerprint"]
    assert list(df.columns[:5]) == ["job_id", "submit_time", "user", "group", "is_recurrent"]
    assert list(df.columns[-3:]) == ["p_star", "y", "split"]
    assert set(df["split"]) == {"train", "val", "test"}
    df.head(3).to_parquet(ds / "atlas.parquet")
    with pytest.raises(InputError, match="fingerprint mismatch"):
        load_dataset(ds)
    with pytest.raises(InputError, match="not an ATLAS dataset"):
        load_dataset(tmp_path / "nothing")
    # a file where the folder belongs: named as a file, with the folder to give instead
    with pytest.raises(InputError, match=f"atlas.parquet: a file, not an ATLAS dataset folder .*: give its folder {ds}$"):
        load_dataset(ds / "atlas.parquet")
    table = tmp_path / "jobs.csv"
    table.write_text("job_id,submit_time,duration\na,0,1\n")
    with pytest.raises(InputError, match="jobs.csv: a file, .*: a jobs table is read by `benchmark run --jobs`$"):
        load_dataset(table)


def _exit_code(argv) -> int:
    """main() returns usage errors (or raises SystemExit on older CLIs): the status either way."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_bad_options_exit_2(tmp_path, capsys):
    assert main(["data", "build", "--source", "pai", "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "--raw-dir" in capsys.readouterr().err
    assert _exit_code(["data", "synth", "--jobs", "-5", "--out", str(tmp_path / "r")]) == 2
    assert "must be an integer >= 1" in capsys.readouterr().err
    assert main(["data", "describe", str(tmp_path / "missing")]) == 2
    assert not (tmp_path / "x").exists()


def test_default_dataset_is_built_once(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path / "cache"))
    folder = default_dataset_dir()
    assert folder.parent == tmp_path / "cache" and folder.name.startswith("default-")
    assert ensure_default_dataset() == folder
    mtime = (folder / "atlas.parquet").stat().st_mtime_ns
    assert ensure_default_dataset() == folder
    assert (folder / "atlas.parquet").stat().st_mtime_ns == mtime
    df, card = load_dataset(folder)
    assert card["source_detail"] == {"jobs": 30000, "seed": 0, "generator": "atlas_data.synth"}
    assert len(df) == card["counts"]["kept"] > 15000


def test_describe_output_that_is_an_existing_file_is_refused_first(tmp_path, capsys):
    # fuzzing: --output EXISTING_FILE failed late with "FILE/durations.svg: ... (File exists)"
    existing = tmp_path / "notes.txt"
    existing.write_text("mine\n")
    assert main(["data", "describe", str(tmp_path / "no-dataset"), "--output", str(existing)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {existing}: --output: is a file, not a folder: give a folder for durations.png/.svg or a .png file name\n"
    assert existing.read_text() == "mine\n"


def test_describe_short_pai_excerpt_prints_no_made_up_arrival_ratios(tmp_path, capsys):
    # 10 jobs, one an hour from 00:07 (UTC+8) on one Monday, in the published value formats
    # (README example of alibaba/clusterdata cluster-trace-gpu-v2020 @7a6c496e: 4550879.0, 1.0, MISC).
    # describe printed "weekend/weekday daily ratio 0.00" (no weekend day in the trace, not zero
    # arrivals) and "peak/trough 100000000000.0" (no arrival at 10:00).
    raw = tmp_path / "raw"
    raw.mkdir()
    rows = {"job": [], "task": [], "instance": []}
    for k in range(10):
        sub, end = 4550879.0 + 3600 * k, 4551416.0 + 3600 * k
        rows["job"].append(f"j{k},i{k},58540f191766,Terminated,{sub},{end}")
        rows["task"].append(f"j{k},tensorflow,1.0,Terminated,{sub},{end},600.0,29.296875,50.0,MISC")
        rows["instance"].append(f"j{k},tensorflow,n{k},w{k},i{k},Terminated,{sub},{end},m1")
    for table, stem in (("job", "pai_job_table"), ("task", "pai_task_table"), ("instance", "pai_instance_table")):
        (raw / f"{stem}.csv").write_text("\n".join(rows[table]) + "\n")
    ds = tmp_path / "ds"
    assert main(["data", "build", "--source", "pai", "--raw-dir", str(raw), "--out", str(ds), "--quiet"]) == 0
    assert json.loads((ds / "dataset.json").read_text())["raw_stats"]["weekend_to_weekday_daily_ratio"] is None
    capsys.readouterr()
    assert main(["data", "describe", str(ds), "--output", str(tmp_path / "d.png")]) == 0
    out = capsys.readouterr().out
    assert ("weekend/weekday daily ratio - (the trace spans no weekend day or no weekday), busiest hour (UTC+8) "
            "00:00, quietest 10:00, peak/trough - (no arrivals at 10:00)") in out
