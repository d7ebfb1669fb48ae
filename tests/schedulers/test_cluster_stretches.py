"""How a run of the cluster simulator keeps its executed stretches (schedulers.cluster.stretches): in
chunks of compact types, 27 bytes a stretch and 8 a placement part, with at most one chunk per field
beyond what the stretches take; `loop.collect` copies them into one array per field with one chunk
of memory on top (at 10⁶ jobs ASTRAEA executes 17 million stretches: kept as six 8-byte typed-list
entries and then copied whole, they took 1.5 GiB at once). And the chunking changes nothing: with
chunks of a few hundred entries, a run crosses many chunk boundaries and gives the same tables. The
narrow types never truncate: a run whose values they would not hold is refused, and a placement at
the bound of its parts' count is kept whole."""

import sys
import tracemalloc

import numpy as np
import pytest

from atlas_data.errors import InputError
from schedulers.cluster import loop, simulator, stretches
from schedulers.cluster.loop import StretchChunks, Stretches, collect
from schedulers.cluster.metrics import allocation_table, simulate_fairness
from schedulers.cluster.scenarios import venus
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

PER_STRETCH = ("job", "start", "end", "kind", "pl", "pn")
PER_PART = ("flat_node", "flat_k")
SMALL_CHUNK_BYTES = 1 << 12  # 512 entries of an 8-byte field, 4,096 of a 1-byte one


@pytest.fixture(scope="module")
def busy():
    """A busy Venus-like workload on 20 × 8 GPUs: preemptions, cold starts, multi-node gangs."""
    return JobSet.from_frame(venus(seed=3, n_jobs=2000, days=3).jobs), ClusterSettings.of(nodes=20, gpus_per_node=8)


def _small_chunks(monkeypatch, chunk_bytes: int) -> None:
    """Chunks of `chunk_bytes` for every field (the Python run reads the module's constants at each call)."""
    bits = {8: "_BITS8", 4: "_BITS4", 2: "_BITS2", 1: "_BITS1"}
    lows = {8: "_LOW8", 4: "_LOW4", 2: "_LOW2", 1: "_LOW1"}
    monkeypatch.setattr(stretches, "CHUNK_BYTES", chunk_bytes)
    for size in (8, 4, 2, 1):
        b = (chunk_bytes // size).bit_length() - 1
        monkeypatch.setattr(stretches, bits[size], b)
        monkeypatch.setattr(stretches, lows[size], (1 << b) - 1)


@pytest.fixture(scope="module")
def small_chunks(busy):
    """The stretches of ASTRAEA's Python run on `busy` with chunks of SMALL_CHUNK_BYTES (StretchChunks)."""
    jobs, cluster = busy
    with pytest.MonkeyPatch.context() as monkeypatch:
        _small_chunks(monkeypatch, SMALL_CHUNK_BYTES)
        args, _ = simulator.arguments(jobs, get_policy("astraea", "cluster")(), cluster=cluster)
        return simulator.run_python(*args).stretches


def test_a_stretch_is_kept_in_27_bytes_and_a_placement_part_in_8(small_chunks):
    chunks = small_chunks
    n, parts = int(chunks.n[0]), int(chunks.flat_n[0])
    assert n > 5_000 and parts > 3_000  # many chunks per field
    held = {name: getattr(chunks, name) for name in PER_STRETCH + PER_PART}
    for name, field in held.items():
        assert {c.dtype for c in field} == {np.dtype(stretches.STORED[name])}, name
        assert {c.nbytes for c in field} == {SMALL_CHUNK_BYTES}, name  # every chunk one size: no copy as they grow
    per_stretch = sum(np.dtype(stretches.STORED[name]).itemsize for name in PER_STRETCH)
    per_part = sum(np.dtype(stretches.STORED[name]).itemsize for name in PER_PART)
    assert (per_stretch, per_part) == (27, 8)
    # what the chunks take: the stretches' bytes and less than one chunk per field more
    stretch_bytes = sum(c.nbytes for name in PER_STRETCH for c in held[name])
    part_bytes = sum(c.nbytes for name in PER_PART for c in held[name])
    assert per_stretch * n <= stretch_bytes < per_stretch * n + len(PER_STRETCH) * SMALL_CHUNK_BYTES
    assert per_part * parts <= part_bytes < per_part * parts + len(PER_PART) * SMALL_CHUNK_BYTES


def test_collect_copies_the_chunks_with_one_field_of_memory_on_top(small_chunks, monkeypatch):
    _small_chunks(monkeypatch, SMALL_CHUNK_BYTES)
    # a stretch of length 0 in the second chunk (this run recorded none): that chunk is copied
    # through its mask, the others whole
    ends = [c.copy() for c in small_chunks.end]
    ends[1][7] = small_chunks.start[1][7]
    ran = small_chunks._replace(end=ends)
    n = int(ran.n[0])
    flat_n = int(ran.flat_n[0])
    positive = np.concatenate(ran.end)[:n] > np.concatenate(ran.start)[:n]
    expected = {name: np.concatenate(getattr(ran, name))[:n][positive] for name in PER_STRETCH}
    expected.update({name: np.concatenate(getattr(ran, name))[:flat_n] for name in PER_PART})
    tracemalloc.start()
    try:  # the run's chunks copied under the tracer, so that it sees them freed
        chunks = StretchChunks(*[[c.copy() for c in field] if isinstance(field, list) else field for field in ran])
        held = sum(sys.getsizeof(c) for name in PER_STRETCH + PER_PART for c in getattr(chunks, name))
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = collect(chunks)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(out, Stretches)
    assert all(getattr(chunks, name) == [] for name in PER_STRETCH + PER_PART)  # the chunk lists are emptied
    for name in PER_STRETCH + PER_PART:
        field = getattr(out, name)
        assert field.dtype == np.dtype(stretches.STORED[name]) and field.base is None, name  # exact arrays, no views
        np.testing.assert_array_equal(field, expected[name], err_msg=name)
    kept = int(positive.sum())
    assert len(out.start) == kept and (out.end > out.start).all()
    # both ways of copying a chunk ran: whole (no stretch of length 0 in it) and masked
    step = stretches.chunk_entries("end")
    assert [lo for lo in range(0, n, step) if not positive[lo:lo + step].all()] == [step]
    made = 27 * kept + 8 * flat_n  # the arrays it returns ...
    assert abs((after - before) - (made - held)) < 4096  # ... in place of the chunks, all freed
    # on top of the chunks, one field's array (8 bytes a stretch; its pages are written as that
    # field's chunks are freed), the mask of kept stretches (a byte each) and one chunk; copying
    # every field before freeing the chunks would take all the arrays' 27 bytes a stretch on top
    bound = 8 * kept + n + SMALL_CHUNK_BYTES + 4096
    assert made > 3 * bound
    assert peak - before <= bound, (peak - before, bound)


def test_chunk_boundaries_change_no_table(busy, monkeypatch, same_run):
    jobs, cluster = busy
    whole = simulate_fairness(jobs, get_policy("astraea", "cluster")(), compiled=False, cluster=cluster)
    _small_chunks(monkeypatch, SMALL_CHUNK_BYTES)
    chunked = simulate_fairness(jobs, get_policy("astraea", "cluster")(), compiled=False, cluster=cluster)
    same_run(whole, chunked)
    assert len(chunked.allocations) > 5_000 and (chunked.allocations["end"] > chunked.allocations["start"]).all()


def test_a_placement_of_the_most_parts_the_stretches_hold_is_kept_whole():
    """A gang over PARTS_MAX one-GPU nodes: its stretch's count of parts is the int16 bound itself,
    stored whole, and so are its parts (a count stored in a narrower type would wrap)."""
    n = stretches.PARTS_MAX
    jobs = JobSet.from_arrays(np.array([0.0]), np.array([100.0]), gpus=np.array([n]))
    cluster = ClusterSettings.of(nodes=n, gpus_per_node=1)
    state = simulator.run(jobs, get_policy("fifo", "cluster")(), False, cluster=cluster)
    seg = state.segments
    assert seg.pn.dtype == np.int16 and seg.pn.tolist() == [n] and seg.pl.tolist() == [0]
    np.testing.assert_array_equal(seg.flat_node, np.arange(n))
    np.testing.assert_array_equal(seg.flat_k, np.ones(n))
    (nodes,) = allocation_table(jobs, state)["nodes"].astype(str)
    assert nodes == ",".join(f"{i}:1" for i in range(n))


@pytest.mark.parametrize("nodes, gpus_per_node, gpus, refused", [
    (stretches.PARTS_MAX + 1, 1, stretches.PARTS_MAX + 1, "placements of at most 32,767 nodes"),
    (1, stretches.NODE_MAX + 1, 1, "nodes of at most 2,147,483,647 GPUs"),
])
def test_a_run_whose_placements_the_narrow_types_would_not_hold_is_refused(nodes, gpus_per_node, gpus, refused):
    jobs = JobSet.from_arrays(np.array([0.0]), np.array([100.0]), gpus=np.array([gpus]))
    cluster = ClusterSettings.of(nodes=nodes, gpus_per_node=gpus_per_node)
    with pytest.raises(stretches.RecordLimitError, match=refused) as refusal:
        simulator.run(jobs, get_policy("fifo", "cluster")(), False, cluster=cluster)
    assert isinstance(refusal.value, InputError)  # bad input: one line and exit status 2 on the command line


def test_collect_refuses_a_run_of_more_placement_parts_than_its_offsets_hold(small_chunks, monkeypatch):
    """Every offset a stretch stores is below the run's count of parts (an int64): `collect` takes
    the stretches while that count is within the int32 offsets' bound, and refuses them past it."""
    flat_n = int(small_chunks.flat_n[0])

    def copied():
        return StretchChunks(*[[c.copy() for c in field] if isinstance(field, list) else field
                               for field in small_chunks])

    _small_chunks(monkeypatch, SMALL_CHUNK_BYTES)
    monkeypatch.setattr(loop, "OFFSETS_MAX", flat_n - 1)
    assert collect(copied()).pl.max() < flat_n
    monkeypatch.setattr(loop, "OFFSETS_MAX", flat_n - 2)
    with pytest.raises(stretches.RecordLimitError, match=f"recorded {flat_n:,} placement parts"):
        collect(copied())
    monkeypatch.undo()
    past = copied()._replace(flat_n=np.array([stretches.OFFSETS_MAX + 2], np.int64))
    with pytest.raises(stretches.RecordLimitError, match="its stretches hold the offsets of at most 2,147,483,648"):
        collect(past)
