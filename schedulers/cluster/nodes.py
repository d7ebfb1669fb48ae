"""The GPU cluster model of the fairness task (docs/fairness.md): nodes with GPUs, gang placement, release.

A `Cluster` knows how many GPUs each node has and how many are free. A *placement* is a tuple of
(node, gpus) pairs; a gang job gets all its GPUs at once or none (`place` returns None).

Placement `consolidated` (as in ASTRAEA): fewest nodes, then best fit —
  1. if one node has enough free GPUs, take the node with the *fewest* free GPUs that still fits
     (best fit; ties: lowest node index);
  2. otherwise the job spans whole nodes: entirely free nodes, largest first, until the remainder
     fits on one node, which is then chosen by best fit among the others (it may be partly used).
     On a homogeneous cluster a 12-GPU job on 8-GPU nodes takes one whole node plus 4 GPUs.
     A job that fits on one node never spreads over several partly used nodes (it waits instead),
     and a multi-node job uses partly used nodes only for its remainder.

Free GPUs are kept in buckets by free count, so a best-fit lookup costs O(max GPUs per node), not
O(nodes). `node_capacities(kind)` reads the real node lists shipped with `atlas_data`
(openb v2023 GPU nodes, PAI-2020 machine spec). May import numpy, pandas and atlas_data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from atlas_data.errors import InputError

Placement = tuple  # tuple[tuple[int, int], ...]

_RESOURCES = Path(__file__).resolve().parents[2] / "atlas_data" / "resources"
NODE_LISTS = {
    "openb": _RESOURCES / "openb" / "openb_node_list_gpu_node.csv",
    "pai": _RESOURCES / "pai_machine_spec.csv",
}


def node_capacities(kind: str) -> np.ndarray:
    """GPUs per node of a real cluster: `openb` (v2023 GPU nodes, 1,213 nodes) or `pai` (PAI-2020
    machine spec, GPU machines only). Nodes without GPUs are left out."""
    import pandas as pd

    if kind not in NODE_LISTS:
        raise InputError(f"unknown node list {kind!r} (choose none, {', '.join(NODE_LISTS)})", where="--node-list")
    path = NODE_LISTS[kind]
    if not path.is_file():
        raise InputError(
            "node list missing from this installation (reinstall atlas-bench, or pass --node-list none)", path=str(path), where="--node-list"
        )
    column = "gpu" if kind == "openb" else "cap_gpu"
    frame = pd.read_csv(path)
    if column not in frame.columns:
        raise InputError("node list has no GPU column", path=str(path), where=f"column '{column}'")
    gpus = pd.to_numeric(frame[column], errors="coerce").fillna(0).to_numpy(np.int64)
    return gpus[gpus > 0]


class Cluster:
    """Nodes × GPUs with free counts; `place` / `take` / `release` placements."""

    __slots__ = ("capacity", "free", "total", "free_total", "_buckets", "_max", "_levels", "_version", "_misses")

    def __init__(self, capacities, free=None) -> None:
        caps = [int(c) for c in capacities]
        if not caps or min(caps) < 1:
            raise InputError("a cluster needs at least one node with at least one GPU", where="--nodes")
        self.capacity: list[int] = caps
        self.free: list[int] = list(caps) if free is None else list(free)
        self.total = sum(caps)
        self.free_total = sum(self.free)
        self._max = max(caps)
        # the distinct capacities, largest first: a wholly free node sits in the bucket of its capacity
        self._levels = sorted(set(caps), reverse=True)
        self._buckets: list[set[int]] = [set() for _ in range(self._max + 1)]
        for i, f in enumerate(self.free):
            self._buckets[f].add(i)
        # `find` is a function of the free counts: a gang size that found no placement finds none again
        # until the counts change (every change bumps the version), which a long queue asks for often
        self._version = 0
        self._misses: dict[int, int] = {}  # gang size -> version at which `find` (no node restriction) failed

    @classmethod
    def homogeneous(cls, nodes: int, gpus_per_node: int) -> "Cluster":
        if nodes < 1 or gpus_per_node < 1:
            raise InputError("--nodes and --gpus-per-node must be >= 1", where="--nodes")
        return cls([gpus_per_node] * nodes)

    def empty_copy(self) -> "Cluster":
        """Same nodes, every GPU free (the view of a scheduling round)."""
        return self.with_free(self.capacity)

    def with_free(self, free) -> "Cluster":
        """Same nodes with the given free counts per node (a round's planning copy): the node
        attributes are shared (they never change), only the free counts and buckets are new."""
        copy = Cluster.__new__(Cluster)
        copy.capacity = self.capacity
        copy.total = self.total
        copy._max = self._max
        copy._levels = self._levels
        copy.free = free = list(free)
        copy.free_total = sum(free)
        buckets = copy._buckets = [set() for _ in range(self._max + 1)]
        for i, f in enumerate(free):
            buckets[f].add(i)
        copy._version = 0
        copy._misses = {}
        return copy

    def max_free(self) -> int:
        for level in range(self._max, 0, -1):
            if self._buckets[level]:
                return level
        return 0

    def set_free(self, node: int, value: int) -> None:
        """Set one node's free count (a round's planning copy), keeping the total in step."""
        if not 0 <= value <= self.capacity[node]:
            raise RuntimeError(f"node {node}: {value} free GPUs of {self.capacity[node]}")
        self.free_total += value - self.free[node]
        self._set_free(node, value)

    def _set_free(self, node: int, value: int) -> None:
        self._version += 1
        self._buckets[self.free[node]].discard(node)
        self.free[node] = value
        self._buckets[value].add(node)

    def _best_fit(self, g: int, exclude=(), allowed=None) -> int:
        for level in range(g, self._max + 1):
            bucket = self._buckets[level]
            if bucket:
                if not exclude and allowed is None:
                    return min(bucket)
                choice = [n for n in bucket if n not in exclude and (allowed is None or n in allowed)]
                if choice:
                    return min(choice)
        return -1

    def find(self, g: int, allowed=None) -> Placement | None:
        """Consolidated placement of a g-GPU gang on the free GPUs, or None (nothing is taken).

        `allowed` (a set of node ids) restricts the nodes that may be used (HiveD's reserved cells).
        """
        if g > self.free_total or g < 1:
            return None
        if allowed is None:
            if self._misses.get(g) == self._version:
                return None
            placement = self._find(g, None)
            if placement is None:
                self._misses[g] = self._version
            return placement
        return self._find(g, allowed)

    def _find(self, g: int, allowed) -> Placement | None:
        node = self._best_fit(g, (), allowed) if g <= self._max else -1
        if node >= 0:
            return ((node, g),)
        # several nodes: wholly free ones, largest first (ties: node index), then one node for the remainder.
        # A wholly free node of capacity c sits in bucket c, so the GPUs in the buckets of the capacities
        # plus the largest free count bound what such a placement can hold: most failures stop here.
        capacity, buckets = self.capacity, self._buckets
        top = self.max_free()
        bound = top
        for c in self._levels:
            bound += c * len(buckets[c])
        if g > bound:
            return None
        whole: list[int] = []
        whole_gpus = 0
        for c in self._levels:
            nodes = [n for n in buckets[c] if capacity[n] == c and (allowed is None or n in allowed)]
            if nodes:
                nodes.sort()
                whole += nodes
                whole_gpus += c * len(nodes)
        if g > whole_gpus + top:  # the allowed whole nodes plus one remainder node cannot hold it
            return None
        chosen: list[tuple[int, int]] = []
        used: set[int] = set()
        remaining = g
        for n in whole:
            if remaining <= self._max:
                last = self._best_fit(remaining, used, allowed)
                if last >= 0:
                    chosen.append((last, remaining))
                    return tuple(chosen)
            take = min(capacity[n], remaining)
            chosen.append((n, take))
            used.add(n)
            remaining -= take
            if remaining == 0:
                return tuple(chosen)
        if 0 < remaining <= self._max:
            last = self._best_fit(remaining, used, allowed)
            if last >= 0:
                chosen.append((last, remaining))
                return tuple(chosen)
        return None

    def fits(self, placement: Placement) -> bool:
        free = self.free
        for n, k in placement:
            if free[n] < k:
                return False
        return True

    def take(self, placement: Placement) -> None:
        self._version += 1
        free, buckets = self.free, self._buckets
        for n, k in placement:
            f = free[n]
            if f < k:
                raise RuntimeError(f"node {n} over-committed: {k} GPUs asked, {f} free")
            buckets[f].discard(n)
            free[n] = f - k
            buckets[f - k].add(n)
            self.free_total -= k

    def place(self, g: int) -> Placement | None:
        """find + take."""
        placement = self.find(g)
        if placement is not None:
            self.take(placement)
        return placement

    def release(self, placement: Placement) -> None:
        self._version += 1
        free, buckets = self.free, self._buckets
        for n, k in placement:
            f = free[n]
            if f + k > self.capacity[n]:
                raise RuntimeError(f"node {n} released more GPUs than it has")
            buckets[f].discard(n)
            free[n] = f + k
            buckets[f + k].add(n)
            self.free_total += k

    def check(self) -> None:
        """Raise if any node is over-committed or the counters disagree (used by tests)."""
        for n, (f, c) in enumerate(zip(self.free, self.capacity)):
            if not 0 <= f <= c:
                raise RuntimeError(f"node {n} has {f} free GPUs of {c}")
            if n not in self._buckets[f]:
                raise RuntimeError(f"node {n} missing from its free bucket")
        if self.free_total != sum(self.free):
            raise RuntimeError("free GPU total out of sync")

