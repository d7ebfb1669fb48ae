"""Cluster model: consolidated placement, gang all-or-nothing, release, real node lists."""

import pytest

from atlas_data.errors import InputError
from schedulers.cluster.nodes import Cluster, node_capacities


def test_best_fit_picks_the_fullest_node_that_fits():
    c = Cluster.homogeneous(3, 8)
    c.take(((0, 5),))  # free: 3, 8, 8
    c.take(((2, 3),))  # free: 3, 8, 5
    assert c.find(2) == ((0, 2),)  # 3 free is the tightest fit
    assert c.find(4) == ((2, 4),)  # 5 free beats 8 free
    assert c.find(8) == ((1, 8),)
    assert c.find(6) == ((1, 6),)


def test_job_larger_than_a_node_spans_whole_nodes_then_best_fit():
    c = Cluster.homogeneous(4, 8)
    c.take(((0, 2),))  # free: 6, 8, 8, 8
    assert c.find(16) == ((1, 8), (2, 8))
    assert c.find(12) == ((1, 8), (0, 4))  # two nodes: a whole one + the tightest fit for 4
    assert c.find(30) == ((1, 8), (2, 8), (3, 8), (0, 6))
    assert c.find(24) == ((1, 8), (2, 8), (3, 8))
    c.take(((1, 2),))  # free: 6, 6, 8, 8
    assert c.find(28) is None  # 28 free, but 8 + 8 + 12: partly used nodes hold only the remainder
    assert c.find(22) == ((2, 8), (3, 8), (0, 6))


def test_gang_is_all_or_nothing():
    c = Cluster.homogeneous(3, 8)
    for n in range(3):
        c.take(((n, 5),))  # 9 GPUs free, 3 per node
    assert c.free_total == 9
    assert c.place(8) is None  # fits in total, not on one node: no partial gang
    assert c.free == [3, 3, 3] and c.free_total == 9
    assert c.place(3) == ((0, 3),)
    c.check()


def test_release_and_over_commit():
    c = Cluster.homogeneous(2, 4)
    p = c.place(4)
    assert p == ((0, 4),)
    with pytest.raises(RuntimeError):
        c.take(((0, 1),))
    c.release(p)
    assert c.free == [4, 4] and c.free_total == 8
    with pytest.raises(RuntimeError):
        c.release(((1, 1),))
    c.check()


def test_heterogeneous_nodes():
    c = Cluster([2, 8, 4])
    assert c.find(3) == ((2, 3),)
    assert c.find(10) == ((1, 8), (0, 2))
    assert c.find(14) == ((1, 8), (2, 4), (0, 2))


def test_real_node_lists():
    openb = node_capacities("openb")
    assert len(openb) == 1213 and int(openb.sum()) == 6212
    pai = node_capacities("pai")  # 1,897 machines, 83 of them CPU-only
    assert len(pai) == 1814 and set(pai.tolist()) == {2, 8}
    with pytest.raises(InputError):
        node_capacities("nope")
