"""The executed-allocations table is built from codes (one text per distinct placement, categorical
columns), and says exactly what one text per stretch, made row by row, says.

The segments a run records: per stretch the job, start, end, kind and its placement record (offset
and part count into the flat node/GPU lists). The reference below reads them one row at a time."""

import weakref

import numpy as np
import pandas as pd
import pytest

from schedulers.cluster import metrics
from schedulers.cluster.loop import Stretches
from schedulers.cluster.metrics import ALLOCATION_COLUMNS, allocation_table
from schedulers.jobs import JobSet


class _Run:
    """What allocation_table reads from a finished run."""

    def __init__(self, segments):
        self.segments = Stretches(*segments)  # job, start, end, kind, pl, pn, flat_node, flat_k


def _segments(rng, n_jobs, n_rows, nodes, gpus_per_node, max_parts):
    """Random stretches over random placement records (several records placing a gang the same way,
    the same parts in another order, zero-length stretches that the table leaves out)."""
    flat_node, flat_k, pl, pn = [], [], [], []
    for _ in range(max(1, n_rows // 3)):
        m = int(rng.integers(1, max_parts + 1))
        if pl and rng.random() < 0.3:  # a record repeating an earlier one, sometimes reversed
            o, mm = pl[int(rng.integers(len(pl)))], None
            mm = pn[pl.index(o)]
            part = list(zip(flat_node[o:o + mm], flat_k[o:o + mm]))
            part = part[::-1] if rng.random() < 0.5 else part
        else:
            chosen = rng.choice(nodes, size=m, replace=False)
            part = [(int(n), int(rng.integers(1, gpus_per_node + 1))) for n in chosen]
        pl.append(len(flat_node))
        pn.append(len(part))
        for n, k in part:
            flat_node.append(n)
            flat_k.append(k)
    record = rng.integers(0, len(pl), size=n_rows)
    start = np.sort(rng.integers(0, 10_000, size=n_rows)).astype(np.float64)
    end = start + rng.integers(0, 3, size=n_rows) * 100.0  # some stretches have zero length
    return (rng.integers(0, n_jobs, size=n_rows).astype(np.int64), start, end,
            rng.integers(0, 2, size=n_rows).astype(np.int64), np.asarray(pl, np.int64)[record],
            np.asarray(pn, np.int64)[record], np.asarray(flat_node, np.int64), np.asarray(flat_k, np.int64))


def _row_by_row(jobs, segments) -> pd.DataFrame:
    s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k = segments
    rows = []
    for i in range(len(s_job)):
        if s_end[i] > s_start[i]:
            o, m, j = int(s_pl[i]), int(s_pn[i]), int(s_job[i])
            nodes = ",".join(f"{flat_node[x]}:{flat_k[x]}" for x in range(o, o + m))
            rows.append((str(jobs.job_id[j]), jobs.tenant_names[jobs.tenant[j]], s_start[i], s_end[i], nodes,
                         int(jobs.gpus[j]), ["run", "cold-start"][int(s_kind[i])]))
    return pd.DataFrame(rows, columns=list(ALLOCATION_COLUMNS))


def _jobs(rng, n, job_ids=None):
    tenants = np.array(["t-b", "t-a", "t-c"])[rng.integers(0, 3, size=n)]
    frame = pd.DataFrame({"job_id": job_ids if job_ids is not None else [f"j{i}" for i in range(n)],
                          "submit_time": np.arange(n, dtype=float), "duration": np.ones(n), "gpus": rng.integers(1, 9, n),
                          "tenant": tenants})
    return JobSet.from_frame(frame)


@pytest.mark.parametrize("seed", range(6))
def test_the_coded_table_says_what_a_text_per_row_says(seed):
    rng = np.random.default_rng(seed)
    jobs = _jobs(rng, 40)
    segments = _segments(rng, jobs.n, 600, nodes=12 + seed, gpus_per_node=8, max_parts=1 + seed % 4)
    table = allocation_table(jobs, _Run(segments))
    expected = _row_by_row(jobs, segments)
    assert list(table.columns) == list(ALLOCATION_COLUMNS)
    for column in ("job_id", "tenant", "nodes", "kind"):
        assert isinstance(table[column].dtype, pd.CategoricalDtype), column
        assert table[column].astype(str).tolist() == expected[column].tolist(), column
    assert table[["start", "end", "gpus"]].equals(expected[["start", "end", "gpus"]])
    # one category per distinct placement text (a gang placed alike by two records is one)
    assert table["nodes"].cat.categories.is_unique
    assert set(table["nodes"].cat.categories) == set(expected["nodes"])


@pytest.mark.parametrize("seed", range(3))
def test_coding_block_by_block_gives_the_same_table(seed, monkeypatch):
    """The one-node placements are coded CODE_BLOCK stretches at a time: blocks of 7 stretches give
    the table of one block, and what a text per row says."""
    rng = np.random.default_rng(seed)
    jobs = _jobs(rng, 40)
    segments = _segments(rng, jobs.n, 600, nodes=12, gpus_per_node=8, max_parts=1 + seed)
    whole = allocation_table(jobs, _Run(segments))
    monkeypatch.setattr(metrics, "CODE_BLOCK", 7)
    blocks = allocation_table(jobs, _Run(segments))
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)
    assert blocks["nodes"].astype(str).tolist() == _row_by_row(jobs, segments)["nodes"].tolist()


def test_the_table_takes_the_stretches_over_and_frees_their_placement_records():
    """The run's stretches are the table's (its job, start, end and kind codes); their placement
    records are freed once coded, not held beside the table."""
    rng = np.random.default_rng(5)
    jobs = _jobs(rng, 20)
    run = _Run(_segments(rng, jobs.n, 200, nodes=8, gpus_per_node=8, max_parts=3))
    records = [weakref.ref(getattr(run.segments, name)) for name in ("pl", "pn", "flat_node", "flat_k")]
    table = allocation_table(jobs, run)
    assert run.segments is None and len(table) > 100
    assert [r() for r in records] == [None] * 4


def test_job_ids_that_read_alike_as_text_share_a_category():
    rng = np.random.default_rng(7)
    jobs = _jobs(rng, 4, job_ids=[1, "1", 2, 3])  # two ids whose text is "1"
    segments = _segments(rng, jobs.n, 50, nodes=4, gpus_per_node=8, max_parts=2)
    table = allocation_table(jobs, _Run(segments))
    assert table["job_id"].cat.categories.is_unique
    assert table["job_id"].astype(str).tolist() == _row_by_row(jobs, segments)["job_id"].tolist()


def test_a_run_with_no_stretch_gives_an_empty_table_with_the_columns():
    rng = np.random.default_rng(0)
    jobs = _jobs(rng, 3)
    empty = tuple(np.zeros(0, np.float64 if i in (1, 2) else np.int64) for i in range(8))
    table = allocation_table(jobs, _Run(empty))
    assert list(table.columns) == list(ALLOCATION_COLUMNS) and len(table) == 0


def test_the_table_round_trips_through_parquet_with_the_same_values(tmp_path):
    rng = np.random.default_rng(3)
    jobs = _jobs(rng, 30)
    table = allocation_table(jobs, _Run(_segments(rng, jobs.n, 300, nodes=8, gpus_per_node=8, max_parts=3)))
    table.to_parquet(tmp_path / "a.parquet", index=False)
    back = pd.read_parquet(tmp_path / "a.parquet")
    for column in ALLOCATION_COLUMNS:
        assert back[column].astype(str).tolist() == table[column].astype(str).tolist(), column
