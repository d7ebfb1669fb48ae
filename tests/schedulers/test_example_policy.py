"""The shipped example policy (examples/my_policy.py): SPJF with a real, settable aging parameter."""

import numpy as np
import pytest

from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import get_policy, resolve_policy

import examples.my_policy  # noqa: F401 - registers spjf-aging


# j0 runs first; while it runs a long job j1 (p̂ = 50) arrives, then four short ones (p̂ = 5)
JOBS = JobSet.from_arrays([0, 1, 2, 3, 4, 5], [10, 50, 5, 5, 5, 5], predicted=[10, 50, 5, 5, 5, 5])


@pytest.fixture(autouse=True)
def _private_registry(monkeypatch):
    import schedulers.policy
    import schedulers.policy_base

    schedulers.policy.policy_names()  # the built-in policies registered first, into the real registry
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))


def _completions(alpha):
    name = resolve_policy(f"spjf-aging(alpha={alpha})", "single")
    return simulate(JOBS, get_policy(name, "single")()).completion_time


def test_aging_by_hand():
    # α = 0: SPJF — the short jobs overtake j1, which finishes last
    np.testing.assert_allclose(_completions(0), [10, 80, 15, 20, 25, 30])
    np.testing.assert_allclose(_completions(0), simulate(JOBS, get_policy("spjf")()).completion_time)
    # α = 20: keys p̂ + α·r = j1 70, j2 45, j3 65, j4 85, j5 105 -> j2, j3, j1, j4, j5
    np.testing.assert_allclose(_completions(20), [10, 70, 15, 20, 75, 80])
    # α = 100: FIFO
    np.testing.assert_allclose(_completions(100), [10, 60, 65, 70, 75, 80])


def test_the_setting_is_part_of_the_name_and_checked():
    assert resolve_policy("spjf-aging(alpha=0.5)", "single") == "spjf-aging(alpha=0.5)"
    assert get_policy("spjf-aging(alpha=0.5)", "single")().alpha == 0.5
    assert get_policy("spjf-aging", "single")().alpha == 0.0
    from atlas_data.errors import InputError

    with pytest.raises(InputError, match="has no parameter 'gamma'"):
        resolve_policy("spjf-aging(gamma=1)", "single")


def test_a_setting_used_once_is_not_a_default_policy_later_in_the_process():
    """A notebook (or a sweep worker) that ran `themis(f=0.5)` once must not get it as one of the
    cluster task's default policies in its next run, nor in the names an error suggests."""
    from schedulers.policy import policy_names

    before = policy_names("cluster")
    assert resolve_policy("themis(f=0.5)", "cluster") == "themis(f=0.5)"
    assert get_policy("themis(f=0.5)", "cluster")().f == 0.5  # still resolvable by its label
    assert policy_names("cluster") == before and "themis" in before
    assert all("(" not in name for name in policy_names())
