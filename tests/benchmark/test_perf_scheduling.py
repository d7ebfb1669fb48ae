"""`benchmark perf` (scheduling section) on tiny sizes: it times every policy and checks the engine
against the O(n²) simulators on the same instance."""

import json

from benchmark.cli import main
from schedulers.policy import policy_names


def test_perf_scheduling_small(tmp_path, capsys):
    out = tmp_path / "perf.json"
    assert main(["perf", "--sizes", "300,600", "--naive-n", "300", "--output", str(out), "--quiet"]) == 0
    figures = json.loads(out.read_text())["scheduling"]
    assert set(figures["policies"]) == {"300", "600"}
    assert set(figures["policies"]["600"]) == set(policy_names("single"))
    for name in ("rr", "prr", "las"):
        naive = figures["naive"][name]
        assert naive["same_schedule"] is True and naive["speedup"] == naive["naive_s"] / naive["engine_s"]
    assert "engine vs plain O(n²) loop at n = 300" in capsys.readouterr().out
