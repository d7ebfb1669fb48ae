"""Paired ranking (leaderboards.ranking): constructed entries compared window by window.

The windows differ far more from each other than the entries do (as on the real board), so the
entries' marginal intervals all overlap; the paired rule must still order an entry that is better on
every window above the others, tie identical ones, and never put a noisy copy above the original.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from atlas_data.errors import InputError
from benchmark.cli import main
from leaderboards.ranking import ALPHA, holm, paired_ranking, paired_test, signed_rank_null
from leaderboards.render import rank_entries
from leaderboards.score import MIN_WINDOW_JOBS, SCORE_WINDOWS, score_prediction, score_windows
from leaderboards.store import load_entries

RNG = np.random.default_rng(11)
WINDOWS = 32
# log of how hard each window is: spread ±1 (a factor e), far more than any difference between entries
HARDNESS = RNG.normal(0.0, 1.0, WINDOWS)


def _sched(name, log_scores, reference=False):
    """A scheduling entry with only what the ranking reads: per-window scores and their geometric mean."""
    values = [float(math.exp(x)) for x in log_scores]
    mean = float(math.exp(np.mean(log_scores)))
    return {"name": name, "slug": name, "reference": reference, "score": mean,
            "scheduling": {"score": {"values": values, "mean": mean}}}


def _pred(name, cov25_windows, reference=False):
    return {"name": name, "slug": name, "reference": reference, "score": float(np.mean(cov25_windows)),
            "prediction": {"rmsle": 1.0, "windows": {"jobs": [85] * len(cov25_windows), "cov25": list(cov25_windows)}}}


def _ranks(entries, track="scheduling"):
    return {e["name"]: r for r, e in paired_ranking(entries, track).rows}


def _marginal(log_scores):
    """95 % percentile-bootstrap interval of the mean log score (the old rule's interval)."""
    rng = np.random.default_rng(0)
    means = np.asarray(log_scores)[rng.integers(0, len(log_scores), (2000, len(log_scores)))].mean(axis=1)
    return np.percentile(means, [2.5, 97.5])


def test_signed_rank_null_and_p_values_are_scipys_exact_ones():
    # T₀ for n = 3: subsets of {1, 2, 3}: sums 0,1,2,3,3,4,5,6 -> P(T₀ ≤ t) in eighths
    assert signed_rank_null(3).tolist() == [1 / 8, 2 / 8, 3 / 8, 5 / 8, 6 / 8, 7 / 8, 1.0]
    for n in (6, 15, 32):
        for _ in range(3):
            d = RNG.normal(0.2, 1.0, n)
            want = stats.wilcoxon(d, method="exact").pvalue
            assert paired_test(d)["p"] == pytest.approx(want, rel=1e-9), n


def test_the_interval_inverts_the_test():
    """Interval excluding 0 <=> p ≤ the level (no zeros); with zeros and ties still => (never a tie shown as separated)."""
    for trial in range(200):
        n = int(RNG.integers(6, 40))
        d = np.round(RNG.normal(RNG.uniform(-1, 1), 1.0, n), 1 if trial % 2 else 6)  # odd trials: ties and zeros
        level = float(RNG.choice([0.05, 0.01, 0.05 / 45]))
        t = paired_test(d, level)
        if t["lo"] is None:
            assert 2 / 2 ** n > level
            continue
        assert t["lo"] <= t["estimate"] <= t["hi"]
        excludes = t["lo"] > 0 or t["hi"] < 0
        if excludes:
            assert t["p"] <= level + 1e-12, (d, level, t)
        if trial % 2 == 0 and not excludes:
            assert t["p"] > level, (d, level, t)


def test_holm_by_hand():
    # sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 -> max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # Holm separates all three where Bonferroni (p·m ≤ 0.05) would keep only the first
    assert max(holm([0.001, 0.02, 0.024])) <= ALPHA and 0.02 * 3 > ALPHA
    assert holm([0.5, 1.0]) == [1.0, 1.0] and holm([]) == []


def test_better_on_every_window_ranks_strictly_above_despite_overlapping_intervals():
    base = 0.4 * HARDNESS - 1.0
    better = base - 0.05  # 5 % lower score on every window
    lo_b, hi_b = _marginal(base)
    lo_g, hi_g = _marginal(better)
    assert lo_b < hi_g and lo_g < hi_b  # the old rule (overlapping 95 % intervals) tied them
    ranking = paired_ranking([_sched("base", base), _sched("better", better)], "scheduling")
    assert [(r, e["name"]) for r, e in ranking.rows] == [("1", "better"), ("2", "base")]
    (pair,) = ranking.pairs
    # a = base (first given): worse; its advantage is -0.05 on every window, the interval is that point
    assert pair["verdict"] == "worse" and pair["windows"] == WINDOWS and ranking.family == 1
    assert pair["estimate"] == pytest.approx(-0.05) and pair["lo"] == pytest.approx(-0.05) and pair["hi"] == pytest.approx(-0.05)
    assert pair["p"] == pytest.approx(2 / 2 ** WINDOWS) and pair["p_holm"] == pair["p"]
    assert ranking.pairs_of("better")[0]["verdict"] == "better"


def test_identical_entries_tie_and_a_noisy_copy_never_ranks_above():
    base = 0.4 * HARDNESS - 1.0
    # a noisy p̂ schedules worse on average (+0.1 in log score), but not on every window (± 0.3)
    entries = [_sched("base", base), _sched("twin", base.copy()), _sched("noisy", base + 0.1 + RNG.normal(0, 0.3, WINDOWS)),
               _sched("dominated", base + 0.2)]
    ranks = _ranks(entries)
    assert ranks["base"] == ranks["twin"] == "=1"
    assert ranks["dominated"] in ("3", "=3", "4")  # below base and twin (and maybe below noisy)
    twin = next(p for p in paired_ranking(entries, "scheduling").pairs if {p["a"], p["b"]} == {"base", "twin"})
    assert twin["p"] == 1.0 and twin["estimate"] == 0.0 and twin["verdict"] == "tie"
    assert ranks["noisy"] in ("=1", "3", "=3")  # ties the original or below it, never alone above
    # the interval shown is at the Bonferroni level of the table's 6 pairs, wider than a 95 % one
    noisy = next(p for p in paired_ranking(entries, "scheduling").pairs if (p["a"], p["b"]) == ("base", "noisy"))
    d = -np.log(entries[2]["scheduling"]["score"]["values"]) + np.log(entries[0]["scheduling"]["score"]["values"])
    wide, narrow = paired_test(-d, ALPHA / 6), paired_test(-d, ALPHA)
    assert (noisy["lo"], noisy["hi"]) == pytest.approx((wide["lo"], wide["hi"]))
    assert wide["lo"] < narrow["lo"] < narrow["hi"] < wide["hi"] and noisy["estimate"] == pytest.approx(wide["estimate"])
    # many noisy copies: none is ever separated above the original
    for k in range(20):
        noisy = base + 0.1 + np.random.default_rng(k).normal(0, 0.3, WINDOWS)
        pair = paired_ranking([_sched("base", base), _sched("noisy", noisy)], "scheduling").pairs[0]
        assert pair["verdict"] != "worse", k  # base is a: 'worse' would put the noisy copy above


def test_oracle_first_constant_last_and_references_are_not_ranked():
    learned = [0.5 * HARDNESS - 1.0 + RNG.normal(0, 0.05, WINDOWS) for _ in range(3)]
    oracle = 0.2 * HARDNESS - 2.8  # far better on every window
    constant = np.zeros(WINDOWS)  # the blind p̂: score 1 on every window
    entries = [_sched(f"learned-{i}", x) for i, x in enumerate(learned)] + [_sched("oracle", oracle), _sched("constant", constant)]
    ranks = _ranks(entries)
    assert ranks["oracle"] == "1" and ranks["constant"] == "5"
    assert all(ranks[f"learned-{i}"] in ("=2", "2", "3", "4") for i in range(3))
    # as a reference the oracle is listed, not ranked, and not in the family
    entries[3] = _sched("oracle", oracle, reference=True)
    ranking = paired_ranking(entries, "scheduling")
    assert ranking.rows[-1] == ("ref", entries[3]) and ranking.family == 6
    assert dict((e["name"], r) for r, e in ranking.rows)["constant"] == "4"


def test_too_few_windows_never_separate():
    """With 5 windows the smallest two-sided p is 2/32 > 5 %: better on every one is still a tie."""
    base = 0.4 * HARDNESS[:5]
    assert _ranks([_sched("a", base), _sched("b", base + 1.0)]) == {"a": "=1", "b": "=1"}


def test_prediction_track_pairs_per_window_cov25_and_holm_counts_every_pair():
    base = np.clip(0.4 + 0.15 * HARDNESS / 3, 0, 1)
    entries = [_pred("base", base), _pred("plus", base + 0.02), _pred("same", base.copy()),
               _pred("unscored", base)]
    entries[3]["score"] = None
    ranking = paired_ranking(entries, "prediction")
    assert [(r, e["name"]) for r, e in ranking.rows] == [("1", "plus"), ("=2", "base"), ("=2", "same"), ("–", "unscored")]
    assert ranking.family == 3  # three scored entries, three pairs
    plus = {(p["a"], p["b"]): p for p in ranking.pairs}[("base", "plus")]
    # p-values tiny, tiny, 1: Holm multiplies the two smallest by 3 and 2, then takes the running maximum
    assert plus["estimate"] == pytest.approx(-0.02) and plus["p"] == pytest.approx(2 / 2 ** WINDOWS)
    assert plus["p_holm"] == pytest.approx(3 * plus["p"]) and plus["verdict"] == "worse"
    # render uses the same rule
    assert [r for r, _ in rank_entries(entries, "prediction")] == ["1", "=2", "=2", "–"]


def test_per_window_cov25_on_the_scoring_windows(dataset):
    _, _, test = dataset
    p = test["p_star"].to_numpy()
    factor = np.where(np.arange(len(p)) % 3 == 0, 1.4, 1.0)  # every third job (in file order) outside 25 %
    windows = score_prediction(pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": p * factor}),
                               test)["windows"]
    order = np.lexsort((test["job_id"].to_numpy(), test["submit_time"].to_numpy()))
    inside = (factor == 1.0)[order]
    blocks = score_windows(len(test))
    assert len(blocks) == len(test) // MIN_WINDOW_JOBS == 8 and SCORE_WINDOWS == 32
    assert windows["jobs"] == [5] * 8
    assert windows["cov25"] == pytest.approx([inside[5 * k:5 * k + 5].mean() for k in range(8)])
    assert [len(b) for b in score_windows(2710)] == [85] * 22 + [84] * 10  # the default dataset: 32 windows


def test_old_schema_and_missing_window_values_are_named_errors(tmp_path, capsys, dataset, good_preds):
    """An entry scored before the paired ranking (schema 3: no per-window Cov@25, 8 overlapping windows)
    cannot be ranked: `leaderboard` names it and says to submit again (exit 2, one line)."""
    from leaderboards.pipeline import load_test, score_entry
    from leaderboards.schema import Submission
    from leaderboards.store import write_entry

    folder, fingerprint, _ = dataset
    sub = Submission(name="x", authors=("A",), description="", url="", track="prediction", dataset_fingerprint=fingerprint)
    entry = score_entry(sub, good_preds, load_test(folder))
    write_entry(entry, tmp_path)
    assert load_entries(tmp_path, "prediction")[0]["prediction"]["windows"]["jobs"] == [5] * 8
    path = tmp_path / "prediction" / f"{entry['slug']}.json"
    old = dict(entry, schema=3)
    old["prediction"] = {k: v for k, v in entry["prediction"].items() if k != "windows"}
    path.write_text(json.dumps(old))
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and path.name in err[0] and "entry of schema 3" in err[0] and "submit it again" in err[0]
    # the current schema without the per-window values: named by key
    path.write_text(json.dumps(dict(old, schema=entry["schema"])))
    with pytest.raises(InputError, match=r"key 'prediction.windows'"):
        load_entries(tmp_path, "prediction")


def _number(label):
    return int(label.lstrip("="))


@pytest.mark.parametrize("track", ["scheduling", "prediction"])
def test_the_committed_builtin_board_gives_verdicts(track):
    """The built-in entries: the oracle (competing) alone first, the constant predictor alone last,
    and on the scheduling board lgbm-meta strictly above single-stage and crr++."""
    from leaderboards.store import default_entries_dir

    entries = [dict(e, reference=False) for e in load_entries(default_entries_dir(), track)]
    ranks = {e["name"]: r for r, e in paired_ranking(entries, track).rows}
    assert ranks["oracle"] == "1" and ranks["constant"] == str(len(entries))
    if track == "scheduling":
        assert _number(ranks["lgbm-meta"]) < min(_number(ranks["single-stage"]), _number(ranks["crr++"]))
