"""`benchmark perf --traces` on a tiny trace: it times the features and each method, and scores them."""

import json

from benchmark.cli import main


def test_perf_traces_small(tmp_path, capsys):
    out = tmp_path / "perf.json"
    assert main(["perf", "--traces", "--perf-trace", "elasticflow:cluster10", "--perf-trace-methods", "constant,oracle",
                 "--output", str(out), "--quiet"]) == 0
    figures = json.loads(out.read_text())["traces"]
    assert figures["counts"]["train"] + figures["counts"]["val"] + figures["counts"]["test"] == 260
    rows = {r["method"]: r for r in figures["rows"]}
    assert set(rows) == {"constant", "oracle"} and rows["oracle"]["rmsle"] == 0 and rows["oracle"]["cov25"] == 1
    assert figures["ok"] is None  # the target is for all ten methods
    assert figures["total_seconds"] >= figures["data_seconds"] + sum(r["seconds"] for r in figures["rows"]) - 0.02
