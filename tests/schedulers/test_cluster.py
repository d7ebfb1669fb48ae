"""Cluster model: consolidated placement (the simulator's `placement.find_placement`), gang all-or-nothing,
real node lists."""

import numpy as np
import pytest

from atlas_data.errors import InputError
from schedulers.cluster.nodes import node_capacities
from schedulers.cluster.policies.hived import cell_owners
from schedulers.cluster import placement


def find(caps, free, g, owner=None, restrict=-1):
    """placement.find_placement on these free counts: ((node, gpus), ...) or None."""
    fr = np.asarray(free, np.int64)
    nodes = placement.search_nodes(caps, owner, len(caps) + 1)
    parts = placement.find_placement(fr, int(fr.sum()), g, nodes, restrict)
    return tuple(zip(nodes.found_node[:parts].tolist(), nodes.found_k[:parts].tolist())) if parts else None


def test_best_fit_picks_the_fullest_node_that_fits():
    free = [3, 8, 5]  # three 8-GPU nodes
    assert find([8] * 3, free, 2) == ((0, 2),)  # 3 free is the tightest fit
    assert find([8] * 3, free, 4) == ((2, 4),)  # 5 free beats 8 free
    assert find([8] * 3, free, 8) == ((1, 8),)
    assert find([8] * 3, free, 6) == ((1, 6),)


def test_job_larger_than_a_node_spans_whole_nodes_then_best_fit():
    free = [6, 8, 8, 8]
    assert find([8] * 4, free, 16) == ((1, 8), (2, 8))
    assert find([8] * 4, free, 12) == ((1, 8), (0, 4))  # two nodes: a whole one + the tightest fit for 4
    assert find([8] * 4, free, 30) == ((1, 8), (2, 8), (3, 8), (0, 6))
    assert find([8] * 4, free, 24) == ((1, 8), (2, 8), (3, 8))
    free = [6, 6, 8, 8]
    assert find([8] * 4, free, 28) is None  # 28 free, but 8 + 8 + 12: partly used nodes hold only the remainder
    assert find([8] * 4, free, 22) == ((2, 8), (3, 8), (0, 6))


def test_gang_is_all_or_nothing():
    assert find([8] * 3, [3, 3, 3], 8) is None  # fits in total, not on one node: no partial gang
    assert find([8] * 3, [3, 3, 3], 3) == ((0, 3),)


def test_heterogeneous_nodes():
    assert find([2, 8, 4], [2, 8, 4], 3) == ((2, 3),)
    assert find([2, 8, 4], [2, 8, 4], 10) == ((1, 8), (0, 2))
    assert find([2, 8, 4], [2, 8, 4], 14) == ((1, 8), (2, 4), (0, 2))


def test_a_restriction_places_on_the_tenants_cells_only():
    # HiveD's cells: nodes 0 and 2 belong to tenant 1, node 1 to tenant 0
    owner = [1, 0, 1]
    assert find([8] * 3, [8, 8, 8], 4, owner, restrict=1) == ((0, 4),)
    assert find([8] * 3, [2, 8, 8], 4, owner, restrict=1) == ((2, 4),)
    assert find([8] * 3, [2, 8, 2], 4, owner, restrict=1) is None  # node 1 is free but not its cell
    assert cell_owners([8] * 4, [24.0, 8.0]) == [0, 0, 0, 1]


def test_real_node_lists():
    openb = node_capacities("openb")
    assert len(openb) == 1213 and int(openb.sum()) == 6212
    pai = node_capacities("pai")  # 1,897 machines, 83 of them CPU-only
    assert len(pai) == 1814 and set(pai.tolist()) == {2, 8}
    with pytest.raises(InputError):
        node_capacities("nope")
