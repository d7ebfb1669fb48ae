"""`reproduce hpc --protocol gaussier15|tsafrir07`: SC'15's filter, its published cells, TPDS'07's statistics.

The shipped CTC-SP2 log is the version SC'15 ran (77,199 jobs after their filter, as in their raw
results): its cells must come out as published. SDSC-SP2's shipped version keeps 53,999 jobs where
theirs kept 54,006 (docs/hpc-backfilling.md): its cells are held to 0.2 % here.
"""

import json

import numpy as np
import pytest

from atlas_data.pwa_filter import STEPS, gaussier15_jobs
from benchmark.experiments import hpc_protocols as hp
from benchmark.cli import main
from benchmark.experiments.rlscheduler import shipped_log

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def test_the_filter_rule_by_rule(tmp_path):
    lines = ["; MaxProcs: 8",
             "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1",   # kept as it is
             "2 5 0 10 9 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1",   # 9 allocated > 8: dropped
             "3 5 0 10 4 -1 -1 9 20 -1 1 1 1 1 1 1 -1 -1",   # 9 requested > 8: dropped
             "4 6 0 10 -1 -1 -1 3 20 -1 1 2 1 1 1 1 -1 -1",  # allocated from the request: 3 processors
             "5 7 0 10 5 -1 -1 -1 20 -1 1 2 1 1 1 1 -1 -1",  # request from the allocation: 5
             "6 8 0 10 -1 -1 -1 -1 20 -1 1 2 1 1 1 1 -1 -1",  # no processor count: dropped
             "7 9 0 0 2 -1 -1 2 20 -1 1 2 1 1 1 1 -1 -1",    # run time 0: dropped
             "8 9 0 10 2 -1 -1 2 -1 -1 1 2 1 1 1 1 -1 -1",   # no requested time: dropped
             "9 9 0 30 2 -1 -1 2 20 -1 1 3 1 1 1 1 -1 -1",   # ran past its request: cut to 20
             "10 -1 0 10 2 -1 -1 2 20 -1 1 3 1 1 1 1 -1 -1"]  # negative submit: dropped
    (tmp_path / "f.swf").write_text("\n".join(lines) + "\n")
    jobs, counts = gaussier15_jobs(tmp_path / "f.swf")
    assert [k for k, _ in counts] == list(STEPS)
    assert [n for _, n in counts] == [10, 9, 8, 7, 6, 5, 5, 4]
    assert jobs["number"].tolist() == [1, 4, 5, 9]
    assert jobs["procs"].tolist() == [4, 3, 5, 2]
    assert jobs["run"].tolist() == [10, 10, 10, 20] and jobs["requested"].tolist() == [20, 20, 20, 20]
    assert jobs["user"].tolist() == [1, 2, 2, 3] and jobs["processors"] == 8


def test_the_filter_keeps_the_papers_job_counts_on_the_shipped_logs():
    _, ctc = gaussier15_jobs(shipped_log("CTC-SP2-1996-3.1-cln.swf.gz"))
    assert [n for _, n in ctc] == [77222, 77222, 77222, 77222, 77205, 77199, 77199, 77199]
    assert ctc[-1][1] == hp.GAUSSIER15["CTC-SP2"]["jobs"]
    _, sdsc = gaussier15_jobs(shipped_log("SDSC-SP2-1998-4.2-cln.swf.gz"))
    assert [n for _, n in sdsc] == [59715, 59715, 59715, 59715, 54034, 53999, 53999, 53999]  # theirs: 54,006


@pytest.mark.parametrize("row", ["easy", "easy-sjbf-clairvoyant", "easy-pp"])
def test_ctc_sp2_cells_come_out_as_published(row):
    rows, _ = hp.run_protocol(shipped_log("CTC-SP2-1996-3.1-cln.swf.gz"), "CTC-SP2", "gaussier15", [row])
    assert rows[0]["jobs"] == 77199
    assert rows[0]["bsld"] == pytest.approx(hp.GAUSSIER15["CTC-SP2"][row], abs=5e-4)


def test_sdsc_sp2_cells_within_the_seven_jobs_the_versions_differ_by():
    rows, _ = hp.run_protocol(shipped_log("SDSC-SP2-1998-4.2-cln.swf.gz"), "SDSC-SP2", "gaussier15",
                              ["easy", "easy-pp"])
    for r in rows:
        assert r["bsld"] == pytest.approx(r["paper_bsld"], rel=2e-3)
        assert r["bsld"] != pytest.approx(r["paper_bsld"], rel=1e-5)  # not the paper's job set


def test_tsafrir07_statistics_by_hand():
    # 3 jobs; the tiny one (1 processor, requested 1 s) is ignored; fewer than 100 jobs: nothing skipped;
    # the job ending after the last submission (at 10) ends the count
    jobs = {"submit": np.array([0, 10, 2]), "run": np.array([5, 20, 1]), "requested": np.array([9, 30, 1]),
            "procs": np.array([2, 2, 1])}
    start = np.array([0, 10, 4])
    s = hp.tsafrir07_statistics(jobs, start)
    # by finish time: job 0 (5), job 2 (5, tiny), job 1 (30 > 10: stop)
    assert s["counted"] == 1 and s["bsld"] == 1.0 and s["wait_min"] == 0.0
    start = np.array([3, 10, 4])  # job 0 waits 3 s: bsld (3 + 5) / 10 → 1
    assert hp.tsafrir07_statistics(jobs, start)["wait_min"] == pytest.approx(3 / 60)


def test_the_command_writes_the_table_and_refuses_an_unknown_row(tmp_path, capsys):
    from swf_logs import random_swf

    log = random_swf(tmp_path / "r.swf", 300, seed=2, max_gap=40, max_request=400)
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(log), "--policies", "easy,easy-pp",
                 "--output", str(out), "--quiet"]) == 0
    summary = json.loads((out / "results.json").read_text())
    assert [r["label"] for r in summary["rows"]] == ["easy", "easy-pp"]
    jobs, _ = gaussier15_jobs(log)
    assert summary["rows"][0]["jobs"] == len(jobs["run"]) and summary["rows"][0]["paper_bsld"] is None
    assert "| r.swf | easy |" in (out / "reproduce-hpc-gaussier15.md").read_text()
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--protocol", "tsafrir07", "--jobs", str(log), "--policies", "easy,nope",
                 "--output", str(tmp_path / "no"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown row 'nope'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()


def test_a_learned_predictor_under_a_protocol_is_an_online_one(tmp_path, capsys):
    from swf_logs import random_swf

    log = random_swf(tmp_path / "r.swf", 400, seed=4, max_gap=30, max_request=400)
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(log), "--predictor", "lgbm-meta",
                 "--output", str(tmp_path / "no"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "online method (online-lgbm, online-lgbm-a0.5, " in err and len(err.strip().splitlines()) == 1
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(log), "--predictor", "online-lgbm",
                 "--policies", "easy,easy-pp", "--output", str(out), "--quiet"]) == 0
    summary = json.loads((out / "results.json").read_text())
    assert [r["label"] for r in summary["rows"]] == ["easy", "easy-pp", "easy-pp (online-lgbm)"]
    assert summary["rows"][2]["p_hat"] == "online-lgbm" and summary["rows"][2]["jobs"] == summary["rows"][1]["jobs"]
    assert "easy-pp: " in (out / "reproduce-hpc-gaussier15.md").read_text()
    # a variant of the online method, by its name: the same rows, its own p̂
    assert main(["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(log), "--predictor", "online-lgbm-fill",
                 "--policies", "easy-pp", "--output", str(tmp_path / "fill"), "--quiet"]) == 0
    rows = json.loads((tmp_path / "fill" / "results.json").read_text())["rows"]
    assert [r["label"] for r in rows] == ["easy-pp", "easy-pp (online-lgbm-fill)"]


def test_a_log_with_fractional_times_out_of_order_runs_under_the_protocol(tmp_path):
    # the papers' reader takes whole seconds (int()): 10.5 s is 10 s; the jobs stay in file order, the
    # simulator submits them in time order; job 3 (0 s) and job 4 (no processors) leave at their steps
    def line(number, submit, run, procs, request):
        return f"{number} {submit} -1 {run} {procs} -1 -1 {procs} {request} -1 1 1 1 1 1 1 -1 -1"

    mixed = ["; MaxProcs: 2", line(1, 10.5, 4.25, 2, 5.5), line(2, 3.25, 2.5, 2, 3), line(3, 4, 0, 1, 10),
             line(4, 5, 3, -1, 10), line(5, 12.75, 2.5, 1, 2)]
    (tmp_path / "mixed.swf").write_text("\n".join(mixed) + "\n")
    jobs, counts = gaussier15_jobs(tmp_path / "mixed.swf")
    assert jobs["number"].tolist() == [1, 2, 5] and jobs["submit"].tolist() == [10, 3, 12]
    assert jobs["run"].tolist() == [4, 2, 2] and jobs["requested"].tolist() == [5, 3, 2]
    assert [n for _, n in counts] == [5, 5, 5, 4, 3, 3, 3, 3]
    rows, _ = hp.run_protocol(tmp_path / "mixed.swf", "mixed.swf", "gaussier15", ["easy"])
    assert rows[0]["jobs"] == 3 and rows[0]["wait"] == pytest.approx((0 + 0 + 2) / 3)  # job 5 waits for job 1 (ends 14)


def test_a_log_the_protocol_cannot_run_is_one_line(tmp_path, capsys):
    lines = ["; MaxProcs: 8"] + [f"{i + 1} {i * 50} 0 40 2 -1 -1 -1 -1 -1 1 1 1 1 1 1 -1 -1" for i in range(20)]
    (tmp_path / "noreq.swf").write_text("\n".join(lines) + "\n")
    (tmp_path / "nomax.swf").write_text("\n".join(lines[1:]) + "\n")
    capsys.readouterr()
    for name, fragment in (("noreq.swf", "no job passes the SC'15 filter (read: 20;"),
                           ("nomax.swf", "no MaxProcs")):
        assert main(["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(tmp_path / name),
                     "--output", str(tmp_path / "no"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert fragment in err and "requested time > 0: 0" in err if name == "noreq.swf" else fragment in err
        assert len(err.strip().splitlines()) == 1 and not (tmp_path / "no").exists()
    assert main(["reproduce", "hpc", "--protocol", "tsafrir07", "--whole", "--output", str(tmp_path / "no"),
                 "--quiet"]) == 2
    assert "leave out --whole" in capsys.readouterr().err


def test_tpds07_ran_ctc_sp2_on_512_processors_and_the_header_says_338():
    rows, _ = hp.run_protocol(shipped_log("CTC-SP2-1996-3.1-cln.swf.gz"), "CTC-SP2", "tsafrir07", ["easy"])
    assert [(r["label"], r["processors"]) for r in rows] == [("easy", 512), ("easy (338 processors)", 338)]
    assert rows[0]["bsld"] == pytest.approx(hp.TSAFRIR07["CTC-SP2"]["easy"][0], abs=0.6)  # 4.47 against 5
    assert rows[0]["wait"] / 60 == pytest.approx(hp.TSAFRIR07["CTC-SP2"]["easy"][1], abs=1.0)  # 20.5 min against 21
    assert rows[1]["bsld"] > 40 and rows[1]["paper_bsld"] is None  # tenfold on the log's own machine


def test_a_log_file_of_the_archive_finds_its_papers_cells_by_name(tmp_path):
    assert hp.paper_key("KTH-SP2-1996-2.1-cln.swf.gz") == "KTH-SP2" and hp.paper_key("SDSC-SP2") == "SDSC-SP2"
    assert hp.paper_key("SDSC-SP2-1998-4.2-cln.swf") == "SDSC-SP2" and hp.paper_key("mine.swf") == "mine.swf"
    # a (random) log named as the archive's KTH-SP2 gets SC'15's KTH-SP2 cells beside ours
    from swf_logs import random_swf

    log = random_swf(tmp_path / "KTH-SP2-1996-2.1-cln.swf", 200, seed=1, max_gap=60, max_request=300)
    rows, _ = hp.run_protocol(log, log.name, "gaussier15", ["easy"])
    assert rows[0]["paper_bsld"] == hp.GAUSSIER15["KTH-SP2"]["easy"] and rows[0]["paper_jobs"] == 28481


def test_shaken_copies_of_a_whole_log_and_the_learned_rows_differences(tmp_path):
    from swf_logs import random_swf

    log = random_swf(tmp_path / "r.swf", 400, seed=6, max_gap=25, max_request=400)
    argv = ["reproduce", "hpc", "--protocol", "gaussier15", "--jobs", str(log), "--policies", "easy,easy-pp",
            "--predictor", "online-lgbm", "--quiet"]
    assert main([*argv, "--shake", "2", "--shake-shift", "0", "--output", str(tmp_path / "zero")]) == 0
    summary = json.loads((tmp_path / "zero" / "results.json").read_text())
    for r in summary["rows"]:  # unmoved copies: every copy's score is the unshaken one
        assert r["bsld_shaken"] == [r["bsld"], r["bsld"]]
    assert [(d["a"], d["b"]) for d in summary["differences"]] == [("easy-pp (online-lgbm)", "easy-pp")]
    assert main([*argv, "--shake", "3", "--output", str(tmp_path / "moved")]) == 0
    summary = json.loads((tmp_path / "moved" / "results.json").read_text())
    easy = summary["rows"][0]
    assert len(easy["bsld_shaken"]) == 3 and easy["bsld_shaken"] != [easy["bsld"]] * 3
    assert "same sign on every copy" in (tmp_path / "moved" / "reproduce-hpc-gaussier15.md").read_text()
