"""Every plot kind on small synthetic inputs: legend entries, axis labels, the blind/predictive
scheme, legends outside the data area, nothing clipped, and the SVG beside each PNG."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from atlas_data.outputs import file_signature
from benchmark import plots
from benchmark.experiments.atlas import figure as reproduce_figure
from benchmark.tasks import fairness, prediction

BLIND = ["fifo", "sjf", "srpt", "rr"]
PREDICTIVE = ["spjf", "sprpt", "pspjf", "crr++"]
PREDICTORS = ["oracle", "noise:0.5", "noise:1", "lgbm-meta"]


def _scheduling_rows():
    rng = np.random.default_rng(0)
    rows = [{"policy": p, "predictor": None, "ratio": 1.5 + rng.random()} for p in BLIND]
    rows += [{"policy": p, "predictor": q, "ratio": 1.0 + rng.random()} for p in PREDICTIVE for q in PREDICTORS]
    return rows


def _per_job():
    rng = np.random.default_rng(1)
    return pd.concat([pd.DataFrame({"policy": r["policy"], "predictor": r["predictor"],
                                    "stretch": 1.0 + rng.lognormal(0.0, 1.0, 50)}) for r in _scheduling_rows()])


def _drawn(fig):
    FigureCanvasAgg(fig).draw()
    return fig


def _legends(fig):
    return [leg for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)] if leg is not None]


def _legend_texts(fig):
    return [t.get_text() for leg in _legends(fig) for t in leg.get_texts()]


def _assert_legends_outside(fig):
    """Each legend lies outside every data area, and inside the figure (not cut off)."""
    _drawn(fig)
    legends = _legends(fig)
    assert legends
    for leg in legends:
        box = leg.get_window_extent()
        for ax in fig.axes:
            if ax.axison:
                assert not box.overlaps(ax.get_window_extent()), (leg, ax.get_title())
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 + 0.5 and box.y1 <= fig.bbox.y1 + 0.5


def _assert_labels_inside(fig):
    """Axis labels are not clipped at the figure's edge."""
    _drawn(fig)
    for ax in fig.axes:
        for label in (ax.xaxis.label, ax.yaxis.label):
            if label.get_text() and label.get_visible():
                box = label.get_window_extent()
                assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 + 0.5 and box.y1 <= fig.bbox.y1 + 0.5, label


def _lines_by_label(ax):
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


# ----- the scheme ------------------------------------------------------------------------------------
def test_the_scheme_tells_blind_from_predictive_and_predictors_apart():
    styles = plots.series_styles((r["policy"], r["predictor"]) for r in _scheduling_rows())
    assert len(styles) == 20
    assert {s.linestyle for s in styles.values() if s.blind} == {plots.BLIND_LINESTYLE}
    assert {s.linestyle for s in styles.values() if not s.blind} == {plots.PREDICTIVE_LINESTYLE}
    assert plots.BLIND_LINESTYLE != plots.PREDICTIVE_LINESTYLE
    # one colour per predictor, the same for every policy using it; no predictor colour is a blind one
    by_predictor = {q: {styles[(p, q)].color for p in PREDICTIVE} for q in PREDICTORS}
    assert all(len(c) == 1 for c in by_predictor.values())
    assert len({c for cs in by_predictor.values() for c in cs}) == 4
    assert not {c for cs in by_predictor.values() for c in cs} & set(plots.BLIND_COLOURS)
    # every series differs from every other in colour, marker or line style
    looks = {(s.color, s.marker, s.linestyle) for s in styles.values()}
    assert len(looks) == 20
    assert styles[("fifo", None)].hatch == plots.BLIND_HATCH and styles[("spjf", "oracle")].hatch is None


def test_there_are_enough_distinct_predictor_colours_for_twenty_series():
    assert len(set(plots.PREDICTOR_COLOURS)) >= 20
    styles = plots.series_styles(("spjf", f"noise:{k}") for k in range(20))
    assert len({s.color for s in styles.values()}) == 20


# ----- scheduling figures ----------------------------------------------------------------------------
def test_stretch_cdf_with_twenty_series(tmp_path):
    fig = plots.stretch_cdf_figure(_per_job(), title="t", s_star=2.0)
    ax = fig.axes[0]
    expected = [*BLIND, *(f"{p} [{q}]" for p in PREDICTIVE for q in PREDICTORS), "S* = 2"]
    assert _legend_texts(fig) == expected
    assert ax.get_xlabel() == "stretch (C − r) / p" and ax.get_ylabel() == "share of jobs"
    lines = _lines_by_label(ax)
    assert {lines[p].get_linestyle() for p in BLIND} == {"--"}
    assert {lines[f"{p} [{q}]"].get_linestyle() for p in PREDICTIVE for q in PREDICTORS} == {"-"}
    assert lines["spjf [oracle]"].get_color() == lines["crr++ [oracle]"].get_color()
    assert lines["spjf [oracle]"].get_marker() != lines["crr++ [oracle]"].get_marker()
    _assert_legends_outside(fig)
    _assert_labels_inside(fig)
    png = plots.stretch_cdf(_per_job(), tmp_path / "stretch_cdf.png", title="t")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "stretch_cdf.svg").read_text().lstrip().startswith("<?xml")


def test_ratio_bars_hatch_the_blind_policies(tmp_path):
    fig = plots.ratio_bars_figure(_scheduling_rows(), title="t")
    ax = fig.axes[0]
    assert _legend_texts(fig) == ["blind (no p̂)", *(f"p̂: {q}" for q in PREDICTORS)]
    assert ax.get_ylabel() == "ratio (1 = optimal / bound)"
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    bars = dict(zip(ticks, ax.patches))
    assert len(bars) == 20
    assert {bars[p].get_hatch() for p in BLIND} == {plots.BLIND_HATCH}
    assert {bars[f"{p} [oracle]"].get_hatch() for p in PREDICTIVE} == {None}
    blind_colours = {bars[p].get_facecolor() for p in BLIND}
    assert len(blind_colours) == 1 and not blind_colours & {bars[f"spjf [{q}]"].get_facecolor() for q in PREDICTORS}
    assert len({bars[f"spjf [{q}]"].get_facecolor() for q in PREDICTORS}) == 4
    _assert_legends_outside(fig)
    plots.ratio_bars(_scheduling_rows(), tmp_path / "ratios.png", title="t")
    assert (tmp_path / "ratios.png").exists() and (tmp_path / "ratios.svg").exists()


def _robustness_frame():
    # spjf, sprpt and pspjf coincide on one machine; sjf and srpt too
    rows = [{"policy": p, "predictor": f"noise:{s}", "ratio": 1.1 + 0.3 * s, "objective": "total_completion"}
            for s in (0.0, 0.5, 1.0) for p in ("spjf", "sprpt", "pspjf")]
    rows += [{"policy": p, "predictor": None, "ratio": 1.05, "objective": "total_completion"} for p in ("sjf", "srpt")]
    return plots.noise_levels(rows).assign(objective="total_completion", task="scheduling")


def test_robustness_curve_keeps_coinciding_lines_apart_and_labels_in_a_legend(tmp_path):
    fig = plots.robustness_curve_figure(_robustness_frame(), title="t")
    ax = fig.axes[0]
    assert _legend_texts(fig) == ["spjf", "sprpt", "pspjf", "sjf (blind)", "srpt (blind)"]
    assert not ax.texts  # no inline labels that could overprint
    assert ax.get_xlabel().startswith("prediction noise σ") and ax.get_ylabel().startswith("ratio (1 = optimal)")
    predictive = {c.get_label(): c.lines[0] for c in ax.containers}
    assert list(predictive) == ["spjf", "sprpt", "pspjf"]
    lines = list(predictive.values())
    assert len({line.get_marker() for line in lines}) == 3
    assert len({line.get_markersize() for line in lines}) == 3  # concentric open markers all show
    assert {line.get_markerfacecolor() for line in lines} == {"none"}
    assert len({line.get_color() for line in lines}) == 3
    blind = [line for line in ax.get_lines() if list(line.get_xdata()) == [0, 1]]  # the horizontal lines
    assert len(blind) == 2 and blind[0].get_color() != blind[1].get_color()
    assert {line.get_linestyle() for line in blind} == {"--"} and {line.get_linestyle() for line in lines} == {"-"}
    assert len({line.get_linewidth() for line in lines}) == 3  # wide under narrow: coinciding lines show
    # the blind policies' markers sit at different σ, so coinciding blind lines show both markers
    markers = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert len({line.get_xdata()[0] for line in markers}) == 2
    # the blind dashes are shifted against each other, so equal ratios show both colours
    assert blind[0]._unscaled_dash_pattern[0] != blind[1]._unscaled_dash_pattern[0]
    _assert_legends_outside(fig)
    _assert_labels_inside(fig)
    plots.robustness_curve(_robustness_frame(), tmp_path / "robustness.png", title="t")
    assert (tmp_path / "robustness.svg").stat().st_size > 1000


def test_sweep_ratio_bars_one_panel_per_objective(tmp_path):
    rows = [{**r, "objective": objective, "task": "scheduling", "cell": f"c{seed}", "seed": seed}
            for objective in ("total_completion", "max_stretch") for seed in (0, 1) for r in _scheduling_rows()[:8]]
    table = pd.DataFrame(rows)
    fig = plots.sweep_ratio_bars_figure(table)
    assert [ax.get_title() for ax in fig.axes] == ["total_completion", "max_stretch"]
    assert _legend_texts(fig) == ["blind (no p̂)", *(f"p̂: {q}" for q in PREDICTORS)]
    assert all(ax.get_ylabel() == "ratio (1 = optimal / bound), mean over seeds" for ax in fig.axes)
    _assert_legends_outside(fig)
    plots.sweep_ratio_bars(table, tmp_path / "sweep_ratios.png")
    assert (tmp_path / "sweep_ratios.svg").exists()


# ----- fairness figures ------------------------------------------------------------------------------
def _fairness_runs():
    rng = np.random.default_rng(2)
    runs = {}
    for name in ("fifo", "astraea", "astraea-p", "themis"):
        intervals = pd.concat([pd.DataFrame({"tenant": t, "start_s": np.arange(0, 86400.0 * 2, 7200.0),
                                             "rho": rng.gamma(4, 0.25, 24)}) for t in ("vc-b", "vc-a", "research")])
        runs[name] = SimpleNamespace(jobs=pd.DataFrame({"rho": rng.gamma(3, 0.4, 60)}), tenant_intervals=intervals,
                                     metrics={"avg_jct": rng.uniform(1e3, 1e5), "avg_slowdown": rng.uniform(1, 50)})
    return runs


def test_tenant_rho_names_the_tenants_and_clips_no_label():
    fig = fairness.tenant_rho_figure(_fairness_runs(), title="t")
    assert _legend_texts(fig) == ["research", "vc-a", "vc-b"]
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["fifo", "astraea", "astraea-p", "themis"]
    assert all(ax.get_xlabel() == "day" for ax in panels)
    assert [ax.get_ylabel() for ax in panels] == ["ρ_tenant per window, ≤ 3", "", "", "ρ_tenant per window, ≤ 3"]
    # one tenant, one colour, in every panel
    colours = [{line.get_label(): line.get_color() for line in ax.get_lines() if not line.get_label().startswith("_")}
               for ax in panels]
    assert all(c == colours[0] for c in colours) and len(set(colours[0].values())) == 3
    _assert_legends_outside(fig)
    _assert_labels_inside(fig)


def test_rho_cdf_and_jct_slowdown_tell_predictive_policies_apart(tmp_path):
    runs = _fairness_runs()
    predictive = {"astraea-p", "themis"}
    fig = fairness.rho_cdf_figure(runs, predictive, title="t")
    ax = fig.axes[0]
    assert _legend_texts(fig) == ["fifo (blind)", "astraea (blind)", "astraea-p", "themis", "ρ = 0.95"]
    assert ax.get_xlabel().startswith("ρ_job") and ax.get_ylabel() == "CDF of jobs"
    lines = _lines_by_label(ax)
    assert lines["fifo (blind)"].get_linestyle() == "--" and lines["astraea-p"].get_linestyle() == "-"
    assert lines["astraea-p"].get_color() != lines["themis"].get_color()
    _assert_legends_outside(fig)
    fig = fairness.jct_slowdown_figure(runs, predictive, title="t")
    assert _legend_texts(fig) == ["blind (no p̂)", "uses p̂"]
    assert [ax.get_ylabel() for ax in fig.axes] == ["average JCT (h)", "average slowdown"]
    hatches = [bar.get_hatch() for bar in fig.axes[0].patches]
    assert hatches == [plots.BLIND_HATCH, plots.BLIND_HATCH, None, None]
    _assert_legends_outside(fig)
    fairness._plots(tmp_path, runs, title="t")
    for name in ("rho_cdf", "tenant_rho", "jct_slowdown"):
        assert (tmp_path / f"{name}.png").exists() and (tmp_path / f"{name}.svg").exists()


# ----- prediction and reproduce figures ---------------------------------------------------------------
def test_prediction_figures(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.lognormal(6, 1, 200)
    frames = {name: (pd.DataFrame({"p_hat": p * rng.lognormal(0, s, 200)}), p)
              for name, s in (("oracle", 0.0), ("constant", 2.0), ("lgbm-meta", 0.5))}
    fig = prediction.coverage_curve_figure(frames)
    ax = fig.axes[0]
    assert _legend_texts(fig) == ["oracle", "constant", "lgbm-meta"]
    assert ax.get_xlabel() == "τ (relative error |p̂ − p| / p)" and ax.get_ylabel() == "Cov@τ"
    assert len({line.get_color() for line in ax.get_lines()}) == 3
    _assert_legends_outside(fig)
    fig = prediction.pred_vs_true_figure(frames)
    assert [ax.get_title() for ax in fig.axes if ax.axison] == list(frames)
    assert all(ax.get_xlabel() == "true p (s)" and ax.get_ylabel() == "predicted p̂ (s)" for ax in fig.axes if ax.axison)
    _assert_labels_inside(fig)
    prediction._plots(tmp_path, frames)
    for name in ("pred_vs_true", "coverage_curve"):
        assert (tmp_path / f"{name}.png").exists() and (tmp_path / f"{name}.svg").exists()


def test_reproduce_figure_legend_outside(tmp_path):
    lines = [{"objective": objective, "row": row, "paper": 1.2, "paper_protocol": 1.3, "honest": None if row == "b" else 1.4}
             for objective in ("total_completion", "makespan", "max_stretch") for row in ("a", "b")]
    path = reproduce_figure(lines, tmp_path / "reproduce-atlas.png")
    assert path.exists() and (tmp_path / "reproduce-atlas.svg").exists()


# ----- saving ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("signed_by", [None, "data describe"])
def test_save_figure_writes_png_and_svg_and_keeps_the_signature(tmp_path, signed_by):
    fig, ax = plots.subplots(figsize=(3, 2))
    ax.plot([1, 2], [3, 4], label="x")
    png = plots.save_figure(fig, tmp_path / "f.png", signed_by=signed_by)
    svg = tmp_path / "f.svg"
    assert png == tmp_path / "f.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text and "<dc:date>" not in text
    assert file_signature(png) == signed_by and file_signature(svg) == signed_by
    again = tmp_path / "g.png"
    plots.save_figure(fig, again, signed_by=signed_by)
    assert (tmp_path / "g.svg").read_text() == text  # no date: the same figure, the same file


def test_cdf_steps_are_the_exact_cdf_thinned():
    rng = np.random.default_rng(0)
    values = rng.lognormal(0.0, 1.0, 50_000)
    s, share = plots.cdf_steps(values, points=500)
    assert 490 <= len(s) <= 500 and s[0] == values.min() and s[-1] == values.max() and share[-1] == 1.0
    # every kept step is a point of the exact empirical CDF
    exact = np.searchsorted(np.sort(values), s, side="right") / len(values)
    np.testing.assert_allclose(share, exact)
    small, small_share = plots.cdf_steps([3.0, 1.0, 2.0])
    assert small.tolist() == [1.0, 2.0, 3.0] and small_share.tolist() == [1 / 3, 2 / 3, 1.0]


@pytest.mark.parametrize("string_dtype", [True, False])
def test_series_cdf_steps_are_the_groupby_series_in_first_row_order(string_dtype):
    """The stretch CDF's series, found with one mask per series, are pandas' groupby(sort=False,
    dropna=False) groups: same keys (no predictor: NaN), same order, same values — interleaved rows,
    a policy with and without a predictor, a predictor shared by two policies."""
    rng = np.random.default_rng(0)
    policy = rng.choice(["srpt", "spjf", "prr", "fifo"], 3000)
    predictor = np.where(np.isin(policy, ["srpt", "fifo"]), None, rng.choice(["noise:0.5", "lgbm-meta", None], 3000))
    frame = pd.DataFrame({"policy": policy, "predictor": predictor, "stretch": rng.lognormal(0, 1, 3000)})
    if string_dtype:
        frame = frame.astype({"policy": "string", "predictor": "string"})
    got = plots.series_cdf_steps(frame)
    expected = list(frame.groupby(["policy", "predictor"], dropna=False, sort=False)["stretch"])
    assert len(got) == len(expected) == 8
    for ((p, q), (s, share)), ((ep, eq), values) in zip(got, expected):
        assert p == ep and ((pd.isna(q) and pd.isna(eq)) or (not pd.isna(q) and not pd.isna(eq) and q == eq))
        es, eshare = plots.cdf_steps(values.to_numpy())
        assert np.array_equal(s, es) and np.array_equal(share, eshare)
