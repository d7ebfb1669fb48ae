"""schedulers.inlining: the Python keyed loops get the bodies of their key functions and preemption
rules copied in (as numba copies them into the compiled loops), from the one source, with the same
operations in the same order — and a body it cannot copy exactly stays a call."""

import dis

import pytest

from schedulers import fastpath
from schedulers.inlining import inline_calls, inlined
from schedulers.jit import jitable
from schedulers.policies import single
from schedulers.policy import get_policy

PREEMPTIVE_KEYED = ["pspjf", "srpt", "sprpt", "edf", "edf-p", "las-ref", "edf-p-ref"]


def _calls(function) -> set[str]:
    """The global or closure names a function loads (a call of a plug-in reads one of these)."""
    return {i.argval for i in dis.get_instructions(function) if i.opname in ("LOAD_GLOBAL", "LOAD_DEREF")}


@pytest.mark.parametrize("name", PREEMPTIVE_KEYED)
def test_the_python_keyed_loops_carry_their_key_and_rule_as_code_not_calls(name):
    cls = get_policy(name, "single")
    make = fastpath._make_edf_p if name == "edf-p" else fastpath._make_one_at_a_time
    plug_ins = fastpath._plug_ins(make, cls)
    plain = make(*plug_ins, "python")
    loop = fastpath._PYTHON_LOOPS.keyed(make, cls)
    assert loop is not plain and loop.__qualname__ == plain.__qualname__
    assert "prefer" in _calls(plain) and "prefer" not in _calls(loop)
    assert "key" in _calls(plain)
    if name == "edf-p":  # its doubling rule has a loop: it stays a call, and takes the key as an argument
        assert "double" in _calls(loop) and "key" in _calls(loop)
    else:
        assert "key" not in _calls(loop)


@jitable(inline=True)
def _twice_plus(a, b):
    doubled = a + a
    return doubled + b


@jitable(inline=True)
def _one_line(a, b):
    return a * b - a


@jitable(inline=True)
def _reads_a_global(a):
    return a + _OFFSET


@jitable(inline=True)
def _branches(a):
    if a > 0:
        return a
    return -a


_OFFSET = 2.5
_EVALUATED = []


def _argument(value):
    _EVALUATED.append(value)
    return value


def _make_loop(twice, line, glob, branch):
    def loop(x, y):
        doubled = 100.0  # the caller's own name: the copied body's local must not clobber it
        z = twice(_argument(x), _argument(y))
        w = line(x, 3.0) if line(y, 2.0) > 0 else 0.0
        return z, w, glob(x), branch(-y), doubled
    return loop


def test_a_copied_body_evaluates_each_argument_once_in_order_and_keeps_the_caller_s_names():
    plain = _make_loop(_twice_plus, _one_line, _reads_a_global, _branches)
    loop = inline_calls(plain)
    assert loop is not plain
    names = _calls(loop)
    assert "twice" not in names and "line" not in names  # copied
    assert "glob" in names and "branch" in names  # a global read and a branch: left as calls
    _EVALUATED.clear()
    assert loop(1.5, 4.0) == plain(1.5, 4.0) == (7.0, 3.0, 4.0, 4.0, 100.0)
    assert _EVALUATED == [1.5, 4.0, 1.5, 4.0]  # each argument once, left to right, in both runs


def test_a_loop_with_nothing_to_copy_is_returned_as_it_is():
    def loop(x):
        return _argument(x)
    assert inline_calls(loop) is loop
    assert not inlined(_argument) and inlined(single.remaining_size) and inlined(single.preempts)


def test_the_copied_loops_give_the_plain_loops_schedule_bit_for_bit():
    """Against the loop as made (its calls kept) on the same columns: the same completions, starts,
    preemptions and events, float for float, for every preemptive keyed policy."""
    from benchmark.experiments.perf.scheduling import generated_jobs

    jobs = generated_jobs(3_000, seed=4, load=1.2)
    n = jobs.n
    submit = jobs.submit_time.tolist() + [float("inf")]
    for name in PREEMPTIVE_KEYED:
        policy = get_policy(name, "single")()
        cls = type(policy)
        make = fastpath._make_edf_p if name == "edf-p" else fastpath._make_one_at_a_time
        key_size = jobs.size.tolist() if cls.clairvoyant else [0.0] * n
        estimate = jobs.predicted.tolist() if cls.needs_prediction else [0.0] * n
        runs = []
        for loop in (make(*fastpath._plug_ins(make, cls), "python"), fastpath._PYTHON_LOOPS.keyed(make, cls)):
            out = ([float("nan")] * n, [float("nan")] * n, [0] * n)
            if name == "edf-p":
                result = loop(submit, jobs.size.tolist(), key_size, estimate, 1.0, out, 10**9)
            else:
                keys = fastpath.release_keys(policy, jobs).tolist()
                result = loop(submit, jobs.size.tolist(), keys, key_size, estimate, float(policy.stretch), out, 10**9)
            runs.append((result, out))
        assert runs[0] == runs[1], name
        assert sum(runs[1][1][2]) > 0, name  # the instance preempts: the copied rule decided something
