"""The fairness task's default metric definitions rank schedulers (docs/fairness.md, "Why these
defaults"): on the Venus-like scenario every default ρ metric spans at least 3 points over the
default policies, each policy scores at least the ideal schedule's floor, and the CLI, the Python
API and sweeps (which run the CLI's parser) share one set of defaults."""

from __future__ import annotations

import pytest

from benchmark import api
from benchmark.cli import build_parser
from benchmark.tasks.config import from_namespace
from benchmark.tasks.fairness import TABLE_COLUMNS, render
from schedulers.cluster.metrics import TENANT_LOSS_SHARES
from schedulers.cluster.base import RHO_FROM

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

METRICS = ("sharing_loss_jobs", "tenant_loss_intervals")


@pytest.fixture(scope="module")
def venus():
    """All default policies on the Venus-like scenario under the default options (about 10 s)."""
    return api.fairness(scenario="venus")


def test_the_defaults_are_tick_and_eq8_everywhere(venus):
    config = from_namespace(build_parser().parse_args(["run", "--task", "fairness", "--no-mlflow", "--quiet"]))
    assert (config.job_rho_from, config.tenant_loss_share, config.fair_share) == ("tick", "eq8", "eq16")
    assert (RHO_FROM[0], TENANT_LOSS_SHARES[0]) == ("tick", "eq8")
    assert venus.options["job_rho_from"] == "tick" and venus.options["tenant_loss_share"] == "eq8"
    assert (venus.metrics["job_rho_from"] == "tick").all() and (venus.metrics["tenant_loss_share"] == "eq8").all()


@pytest.mark.parametrize("metric", METRICS)
def test_default_metrics_rank_the_default_policies(venus, metric):
    values = venus.metrics[metric]
    assert len(values) >= 8  # every default policy ran (the predictive ones read the scenario's p̂)
    assert values.max() - values.min() >= 0.03
    floor = venus.metrics[f"{metric}_floor"]
    assert floor.nunique() == 1  # one ideal schedule for every policy: same jobs, same ledger options
    assert (values >= floor - 1e-12).all()


def test_floors_are_in_every_row_and_in_the_printed_table(venus):
    # under the default definitions the ideal schedule loses nothing: every job's and window's ρ >= 1
    assert (venus.metrics["sharing_loss_jobs_floor"] == 0.0).all()
    assert (venus.metrics["tenant_loss_intervals_floor"] == 0.0).all()
    assert {"sharing_loss_jobs_floor", "tenant_loss_intervals_floor"} <= set(TABLE_COLUMNS)


def test_old_definitions_have_high_floors_on_the_same_jobs():
    # the paper's simulator's definitions on a contended slice of the same scenario: the ideal
    # schedule already loses jobs and windows, and the printed table shows it beside each policy
    result = api.fairness(scenario="venus", n=400, nodes=20, policies=["fifo", "astraea"],
                          job_rho_from="submit", tenant_loss_share="eq16")
    m = result.metrics
    assert (m["sharing_loss_jobs_floor"] > 0.1).all() and (m["tenant_loss_intervals_floor"] > 0.5).all()
    text = render({"n_jobs": 400, "options": result.options,
                   "rows": [{"policy": p, **row} for p, row in m.to_dict(orient="index").items()]})
    assert "sharing_loss_jobs_floor" in text and "tenant_loss_intervals_floor" in text


def test_cli_rows_and_the_demo_caption_carry_the_floors(tmp_path):
    # the hand-computed workload of tests/schedulers/test_fairness_metrics.py (FLOORS): under the
    # paper's simulator's definitions its ideal schedule loses 2 of 3 jobs and 2 of 3 tenant windows
    import json

    import pandas as pd

    from benchmark.cli import main
    from benchmark.experiments.demo import summary_markdown

    jobs = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": list("abc"), "submit_time": [0, 5, 95], "duration": [100, 50, 30], "gpus": [2, 2, 4],
                  "tenant": ["X", "X", "Y"]}).to_csv(jobs, index=False)
    out = tmp_path / "demo" / "fairness-venus"
    assert main(["run", "--task", "fairness", "--jobs", str(jobs), "--nodes", "1", "--gpus-per-node", "8",
                 "--fair-window", "100", "--job-rho-from", "submit", "--tenant-loss-share", "eq16",
                 "--policies", "fifo,astraea", "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    rows = json.loads((out / "results.json").read_text())["rows"]
    for row in rows:
        assert row["sharing_loss_jobs_floor"] == pytest.approx(2 / 3)
        assert row["tenant_loss_intervals_floor"] == pytest.approx(2 / 3)
        assert row["sharing_loss_jobs"] == pytest.approx(2 / 3)  # uncontended: every policy runs the ideal schedule
    assert ("An ideal schedule (every job started at its first tick, never preempted) scores 66.7% sharing-loss "
            "jobs and 66.7% tenant-loss intervals.") in summary_markdown(tmp_path / "demo")
