"""The executed-allocation stretches of a run of the cluster simulator (`s.seg`, schedulers.cluster.state):
each time a job holds GPUs — from its start, or a cold start's end, to its preemption, completion or
cold start's end — one stretch: the job, start, end, kind (0 run, 1 cold start) and its placement
record (where it starts among the placement parts, `flat_node` / `flat_k`, and how many parts it has).

A run keeps them as they happen, in compact types (STORED: 4 + 8 + 8 + 1 + 4 + 2 = 27 bytes a
stretch, 8 a placement part), each field in chunks of CHUNK_BYTES: a full chunk is followed by a new
one, so nothing is copied while the run goes on (a million ASTRAEA jobs execute 17 million
stretches). A chunk of 32 MiB is a mapping of its own in the common allocators (glibc's threshold
for one is at most 32 MiB), so the pages of a chunk not yet written take no memory, and a chunk
freed gives its memory back at once: after the run schedulers.cluster.loop.collect copies the
chunks into one array per field, freeing each chunk as it is copied, so the copy needs one chunk
on top of what the stretches take.

The narrow types hold every value a run stores, or the run is refused, never truncated: a
placement's parts are on distinct nodes, at most the run's `max_parts`, and
schedulers.cluster.simulator.arguments refuses jobs and a cluster where that count could pass
PARTS_MAX, or a node's index or GPUs NODE_MAX (`flat_node`, `flat_k` and the placements of
schedulers.cluster.state's `s.plan` are int32); a placement record's offset is below the count of
parts recorded (an int64), which `collect` checks against OFFSETS_MAX after the run (2³¹ parts:
about 176 times those of a million ASTRAEA jobs).

May import numpy and schedulers.jit.
"""

from __future__ import annotations

import math

import numpy as np

from atlas_data.errors import InputError
from schedulers.jit import jitable

CHUNK_BYTES = 1 << 25  # 32 MiB
# log2 of the entries in a chunk of a field of 8, 4, 2 and 1 bytes
_BITS8, _BITS4, _BITS2, _BITS1 = 22, 23, 24, 25
_LOW8, _LOW4, _LOW2, _LOW1 = (1 << _BITS8) - 1, (1 << _BITS4) - 1, (1 << _BITS2) - 1, (1 << _BITS1) - 1

#: the type each field of a stretch (schedulers.cluster.loop.Stretches) is kept in, during the run and after it
STORED = {"job": np.int32, "start": np.float64, "end": np.float64, "kind": np.int8, "pl": np.int32, "pn": np.int16,
          "flat_node": np.int32, "flat_k": np.int32}
#: the most parts a placement may have (a stretch's `pn`), the largest placement offset (`pl`), node
#: index and node's GPUs (`flat_node`, `flat_k`) the stored types hold
PARTS_MAX = int(np.iinfo(STORED["pn"]).max)
OFFSETS_MAX = int(np.iinfo(STORED["pl"]).max)
NODE_MAX = int(np.iinfo(STORED["flat_node"]).max)


class RecordLimitError(InputError):
    """A run whose placements the stored types would not hold (more nodes in one placement than
    PARTS_MAX, a node index or node's GPUs past NODE_MAX, more parts in a run than OFFSETS_MAX + 1):
    refused with one line (exit status 2 on the command line), never truncated."""


def chunk_entries(name: str) -> int:
    """How many entries of field `name` (a STORED field) a chunk holds."""
    return CHUNK_BYTES // np.dtype(STORED[name]).itemsize


@jitable
def empty_chunks(dtype):
    """An empty list of chunks of `dtype` (typed for numba)."""
    out = [np.empty(0, dtype)]
    out.clear()
    return out


@jitable
def open_segment(s, j, t, kind):
    """A new stretch of job j from t on its current placement record, open (its end NaN)."""
    seg = s.seg
    i = seg.n[0]
    if (i >> _BITS8) == len(seg.start):
        seg.start.append(np.empty(1 << _BITS8, np.float64))
        seg.end.append(np.empty(1 << _BITS8, np.float64))
    if (i >> _BITS4) == len(seg.job):
        seg.job.append(np.empty(1 << _BITS4, np.int32))
        seg.pl.append(np.empty(1 << _BITS4, np.int32))
    if (i >> _BITS2) == len(seg.pn):
        seg.pn.append(np.empty(1 << _BITS2, np.int16))
    if (i >> _BITS1) == len(seg.kind):
        seg.kind.append(np.empty(1 << _BITS1, np.int8))
    c8 = i >> _BITS8
    o8 = i & _LOW8
    c4 = i >> _BITS4
    o4 = i & _LOW4
    seg.start[c8][o8] = t
    seg.end[c8][o8] = math.nan
    seg.job[c4][o4] = j
    seg.pl[c4][o4] = seg.pl_flat_of[j]
    seg.pn[i >> _BITS2][i & _LOW2] = s.plan.pl_len[j]
    seg.kind[i >> _BITS1][i & _LOW1] = kind
    seg.seg_open[j] = i
    seg.last_seg[j] = i
    seg.n[0] = i + 1


@jitable
def close_segment(s, j, t):
    """Job j's open stretch (if any) ends at t."""
    seg = s.seg
    i = seg.seg_open[j]
    if i >= 0:
        seg.end[i >> _BITS8][i & _LOW8] = t
        seg.seg_open[j] = -1


@jitable
def reopen_segment(s, j, t):
    """Job j holds GPUs again from t: its last stretch goes on if it ended at t (a preemption undone
    at the same instant), else a new one (a cold start if it is in one)."""
    seg = s.seg
    i = seg.last_seg[j]
    if i >= 0:
        end = seg.end[i >> _BITS8]
        if end[i & _LOW8] == t:
            end[i & _LOW8] = math.nan
            seg.seg_open[j] = i
            return
    open_segment(s, j, t, 1 if not math.isnan(s.q.undo_until[j]) else 0)


@jitable
def record_placement(s, j):
    """Job j's planned placement (`s.plan.plan_node` / `plan_k`, `plan_len` parts) as its new
    placement record: the stretches it opens from now on name it."""
    seg = s.seg
    plan_node = s.plan.plan_node
    plan_k = s.plan.plan_k
    i = seg.flat_n[0]
    seg.pl_flat_of[j] = i
    for part in range(s.plan.plan_len[j]):
        c = i >> _BITS4
        if c == len(seg.flat_node):
            seg.flat_node.append(np.empty(1 << _BITS4, np.int32))
            seg.flat_k.append(np.empty(1 << _BITS4, np.int32))
        seg.flat_node[c][i & _LOW4] = plan_node[j, part]
        seg.flat_k[c][i & _LOW4] = plan_k[j, part]
        i += 1
    seg.flat_n[0] = i
