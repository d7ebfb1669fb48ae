"""`benchmark perf --pipeline` runs end to end (small here; the full 1.2 M-job run is marked slow)."""

import json

import pytest

from benchmark.cli import main


def test_perf_pipeline_small(tmp_path, capsys):
    out = tmp_path / "perf.json"
    assert main(["perf", "--pipeline", "--pipeline-jobs", "3000", "--pipeline-dir", str(tmp_path / "work"),
                 "--output", str(out)]) == 0
    figures = json.loads(out.read_text())["pipeline"]
    assert figures["jobs"] == 3000 and figures["kept"] > 1000
    for key in ("synth_s", "write_csv_s", "read_raw_s", "features_s", "raw_to_features_s", "pipeline_peak_rss_gb"):
        assert figures[key] > 0
    assert (tmp_path / "work" / "dataset" / "atlas.parquet").exists()
    assert "raw -> features total" in capsys.readouterr().out


@pytest.mark.slow
def test_perf_pipeline_full_scale(tmp_path):
    out = tmp_path / "perf.json"
    assert main(["perf", "--pipeline", "--quiet", "--output", str(out)]) == 0
    figures = json.loads(out.read_text())["pipeline"]
    assert figures["raw_to_features_s"] < 300 and figures["pipeline_peak_rss_gb"] < 8
