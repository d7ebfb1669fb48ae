"""Why the ASTRAEA ranking differs from the paper's: the ablation runs of `benchmark reproduce astraea`
(YARN-CS's maximum capacity and preemption, a heavier load, Themis's p̂ and settings, ASTRAEA given p̂,
the same settings on Philly, more draws of the scenario) as records, the answers read from them,
and the section's markdown (docs/fairness.md "Why the ranking differs").

Part of the experiments package (benchmark.experiments): may import benchmark.experiments.astraea_runs
and through it benchmark.* below the commands, atlas_data and schedulers.
"""

from __future__ import annotations

import math

from benchmark.experiments.astraea_runs import (AGREE_TEXT, DRAW_POLICIES, PAPER_VENUS, PHILLY_ABLATIONS,
                                                PHILLY_POLICIES, PREDICTION_SIGMA, YARN_CAPS, Run, _pct,
                                                noisy_rank_correlation, verdict)

# ----- why the ranking differs: the ablations ----------------------------------------------------
METRICS = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_slowdown")


def _record(run: Run, policy: str, group: str, label: str, **extra) -> dict:
    paper = {} if extra.get("philly") else (
        PAPER_VENUS.get(policy.split("(")[0], {}) if "(" not in policy or group == "YARN-CS" else {})
    return {"group": group, "run": label, "policy": policy, "gpus": run.gpus, "seed": run.doc["options"].get("seed"),
            "offered_load": run.load.get("load"), **{m: run.metric(policy, m) for m in METRICS},
            "paper_sharing_loss_jobs": paper.get("sharing_loss_jobs"),
            "paper_tenant_loss_intervals": paper.get("tenant_loss_intervals"), **extra}


def ablation_table(runs: dict[str, list]) -> list[dict]:
    """The ablation runs as records (group, run, policy, the three metrics, the paper's figures for the
    policy's figures where the run stands for that baseline), in the order of the section."""
    if not runs.get("ablations"):
        return []
    main = Run(runs["venus"][0]["dir"], runs["venus"][0]["doc"])
    abl = Run(runs["ablations"][0]["dir"], runs["ablations"][0]["doc"])
    out = [_record(main, "yarn-cs", "YARN-CS", "ours: idle quota lent without limit (YARN's elasticity)", cap=math.inf)]
    for cap in YARN_CAPS:
        what = "hard quotas (the paper: a static-quota baseline)" if cap == 1 else f"borrows up to {cap:g} × its quota"
        out.append(_record(abl, f"yarn-cs(max_capacity={cap:g})", "YARN-CS", what, cap=cap))
    out.append(_record(abl, "yarn-cs(preempt=True)", "YARN-CS", "ours with YARN's optional preemption at lease rounds"))
    for item in runs.get("ablation-load", []):
        load = Run(item["dir"], item["doc"])
        for policy in ("yarn-cs", "astraea"):
            out.append(_record(load, policy, "heavier load", f"{policy}, {item['cell'].nodes} nodes (offered load "
                                                        f"{load.load.get('load') or 0:.2f})", nodes=item["cell"].nodes))
    out.append(_record(main, "themis", "Themis", f"ours: the scenario's p̂ (σ = {PREDICTION_SIGMA:g})", noise=None))
    for item in sorted(runs.get("ablation-noise", []), key=lambda i: i["cell"].noise):
        noisy = Run(item["dir"], item["doc"])
        sigma = item["cell"].noise
        out.append(_record(noisy, "themis", "Themis", "exact p̂" if sigma == 0 else f"p̂ = p·exp({sigma:g} Z)",
                           noise=sigma, rank_corr=noisy_rank_correlation(sigma, item["cell"].seed)))
    labels = {"themis(size_blind=True)": "one p̂ for every job (their median): no size information",
              "themis(reauction=False)": "no lease re-auction (a job keeps its GPUs)",
              "themis(f=0.0)": "f = 0: every job bids", "themis(f=0.95)": "f = 0.95: the worst 5 % bid"}
    for policy, label in labels.items():
        out.append({**_record(abl, policy, "Themis", label), "paper_sharing_loss_jobs":
                    PAPER_VENUS["themis"].get("sharing_loss_jobs") if policy == "themis(size_blind=True)" else None})
    out.append(_record(main, "astraea", "ASTRAEA", "ASTRAEA (no p̂)"))
    out.append(_record(abl, "astraea-p", "ASTRAEA", f"ASTRAEA-P: ASTRAEA given the same p̂ (σ = {PREDICTION_SIGMA:g})"))
    for item in runs.get("ablation-noise", []):
        if item["cell"].noise == 0:
            out.append(_record(Run(item["dir"], item["doc"]), "astraea-p", "ASTRAEA", "ASTRAEA-P, exact p̂", noise=0.0))
    out.append(_record(main, "gandiva-fair", "Gandiva_fair", "ours: stride over tenants, least-attained job first"))
    for item in runs.get("ablation-philly", []):
        nodes = item["cell"].nodes
        group = f"Philly {nodes} × 8"
        main_philly = next((Run(i["dir"], i["doc"]) for i in runs.get("philly", []) if i["cell"].nodes == nodes), None)
        if main_philly is not None:
            out += [_record(main_philly, p, group, f"{p} (ours)", philly=True) for p in PHILLY_POLICIES]
        abl_philly = Run(item["dir"], item["doc"])
        out += [_record(abl_philly, p, group, p, philly=True) for p in PHILLY_ABLATIONS]
    for item in sorted(runs.get("ablation-draws", []), key=lambda i: i["cell"].seed):
        draw = Run(item["dir"], item["doc"])
        for policy in DRAW_POLICIES:
            out.append(_record(draw, policy, f"draw {item['cell'].seed}", f"{policy}, --seed {item['cell'].seed}"))
    return out


def _find(table: list[dict], policy: str, group: str | None = None, **where) -> dict | None:
    for r in table:
        if r["policy"] == policy and (group is None or r["group"] == group) and all(r.get(k) == v for k, v in where.items()):
            return r
    return None


def _noise_name(sigma: float) -> str:
    return "exact p̂" if sigma == 0 else f"σ = {sigma:g}"


def _both_agree(r: dict) -> bool:
    return (verdict(r["paper_sharing_loss_jobs"], r["sharing_loss_jobs"]) == "agrees"
            and verdict(r["paper_tenant_loss_intervals"], r["tenant_loss_intervals"]) == "agrees")


def ablation_answers(table: list[dict]) -> list[str]:
    """The section's answers, one paragraph per question, every number read from `table`."""
    if not table:
        return []
    out = []
    yarn = {r["cap"]: r for r in table if r["group"] == "YARN-CS" and "cap" in r}
    paper_y = PAPER_VENUS["yarn-cs"]
    if yarn:
        ours, hard = yarn.get(math.inf), yarn.get(1.0)
        preempt = _find(table, "yarn-cs(preempt=True)", "YARN-CS")
        preempted = ("" if preempt is None else
                     f" With YARN's optional preemption (each tenant's quota taken back from borrowers at lease rounds) "
                     f"it scores {_pct(preempt['sharing_loss_jobs'])} / {_pct(preempt['tenant_loss_intervals'])}: "
                     + ("it brings both figures to the paper's." if _both_agree(preempt) else
                        "preemption is not the difference."))
        agree = sorted((c for c, r in yarn.items() if _both_agree(r)), reverse=True)
        text = (f"**YARN-CS at {_pct(ours['sharing_loss_jobs'])}, not {_pct(paper_y['sharing_loss_jobs'])}.** Ours lends "
                f"idle quota without limit (YARN's default elasticity): at an offered load of "
                f"{ours['offered_load']:.2f}, {_pct(ours['sharing_loss_jobs'])} sharing-loss jobs, "
                f"{_pct(ours['tenant_loss_intervals'])} tenant-loss intervals.{preempted} The paper counts YARN-CS among its "
                "static-quota baselines; capping what a tenant may borrow (YARN's maximum-capacity) moves ours to its "
                "figures: " + "; ".join(f"{'hard quotas' if c == 1 else f'{c:g} × quota'} {_pct(r['sharing_loss_jobs'])} / "
                                         f"{_pct(r['tenant_loss_intervals'])}" for c, r in sorted(yarn.items(), reverse=True)
                                         if c != math.inf)
                + f" (paper {_pct(paper_y['sharing_loss_jobs'])} / {_pct(paper_y['tenant_loss_intervals'])}). ")
        text += (f"Both figures agree ({AGREE_TEXT}) at a cap of {', '.join(f'{c:g}' for c in agree)} × quota"
                 if agree else "No cap makes both figures agree")
        if hard is not None:
            text += (f"; hard quotas overshoot the tenant-loss figure ({_pct(hard['tenant_loss_intervals'])}: a tenant "
                     "at its cap cannot fill a fractional quota with whole gangs, so nearly every window with "
                     "demand loses)")
        loaded = [r for r in table if r["group"] == "heavier load"]
        if loaded:
            y, a = _find(loaded, "yarn-cs"), _find(loaded, "astraea")
            text += (f". A heavier load alone does it too — on {y['nodes']} nodes (offered load {y['offered_load']:.2f}) "
                     f"our YARN-CS scores {_pct(y['sharing_loss_jobs'])} / {_pct(y['tenant_loss_intervals'])} — but "
                     f"there ASTRAEA scores {_pct(a['sharing_loss_jobs'])} / {_pct(a['tenant_loss_intervals'])} against "
                     f"its {_pct(PAPER_VENUS['astraea']['sharing_loss_jobs'])} / "
                     f"{_pct(PAPER_VENUS['astraea']['tenant_loss_intervals'])}, "
                     + ("which agrees too" if _both_agree(a) else "which no longer agrees: the load is not the difference"))
        out.append(text + ".")
    themis = [r for r in table if r["group"] == "Themis"]
    if themis:
        ours = _find(themis, "themis", noise=None)
        blind = _find(themis, "themis(size_blind=True)")
        noisy = [r for r in themis if r["policy"] == "themis" and r.get("noise") is not None]
        paper_t = PAPER_VENUS["themis"]["sharing_loss_jobs"]
        text = (f"**What makes our Themis strong ({_pct(ours['sharing_loss_jobs'])} sharing-loss jobs, "
                f"{_pct(ours['tenant_loss_intervals'])} tenant-loss intervals).** It serves the worst "
                "(wait + remaining p̂) / p̂ first, re-auctioned every lease: with p̂ that ranks sizes this is the "
                "slowdown so far, nearly the ρ_job that sharing loss counts. Given one p̂ for every job it scores "
                f"{_pct(blind['sharing_loss_jobs'])} / {_pct(blind['tenant_loss_intervals'])} "
                f"({verdict(paper_t, blind['sharing_loss_jobs'])} with the paper's {_pct(paper_t)}). p̂'s error hardly "
                "matters while p̂ still ranks sizes: " + ", ".join(
                    f"{_noise_name(r['noise'])} {_pct(r['sharing_loss_jobs'])}"
                    + ("" if r.get("rank_corr") is None else f" (Spearman ≈ {r['rank_corr']:.2f})") for r in noisy) + ". ")
        others = [(_find(themis, p), what) for p, what in (("themis(reauction=False)", "without the lease re-auction"),
                                                            ("themis(f=0.0)", "f = 0"), ("themis(f=0.95)", "f = 0.95"))]
        others = [(r, what) for r, what in others if r is not None]
        size_effect = abs(blind["sharing_loss_jobs"] - ours["sharing_loss_jobs"])
        less = all(abs(r["sharing_loss_jobs"] - ours["sharing_loss_jobs"]) < size_effect for r, _ in others)
        text += ("The lease re-auction and the knob f move it less than p̂ does: " if less else
                 "The lease re-auction and the knob f move it as much as p̂ does or more: ") + "; ".join(
            f"{what} {_pct(r['sharing_loss_jobs'])} / {_pct(r['tenant_loss_intervals'])}" for r, what in others)
        a, ap = _find(table, "astraea", "ASTRAEA"), _find(table, "astraea-p", "ASTRAEA", noise=None)
        if a is not None and ap is not None:
            text += (f". ASTRAEA reads no p̂ ({_pct(a['sharing_loss_jobs'])} / {_pct(a['tenant_loss_intervals'])}); "
                     f"given the same p̂ (ASTRAEA-P) it scores {_pct(ap['sharing_loss_jobs'])} / "
                     f"{_pct(ap['tenant_loss_intervals'])}. The paper does not give its Themis's p̂ error; "
                     + ("ours is strong because it is given per-job sizes that ASTRAEA does not read"
                        if blind["sharing_loss_jobs"] > a["sharing_loss_jobs"] > ours["sharing_loss_jobs"] else
                        "even without per-job sizes ours is not behind ASTRAEA"
                        if blind["sharing_loss_jobs"] <= a["sharing_loss_jobs"] else
                        "ours is behind ASTRAEA even with per-job sizes"))
        out.append(text + ".")
    philly = [r for r in table if r.get("philly")]
    if philly:
        at = {r["policy"]: r for r in philly}
        fig = lambda p: f"{_pct(at[p]['sharing_loss_jobs'])} / {_pct(at[p]['tenant_loss_intervals'])}"  # noqa: E731
        text = (f"**On {philly[0]['group']}** (offered load {philly[0]['offered_load']:.2f}; the paper gives no Philly "
                "percentages): " + ", ".join(f"{p} {fig(p)}" for p in PHILLY_POLICIES if p in at) + ".")
        if "themis(size_blind=True)" in at and "themis" in at:
            text += f" Themis with one p̂ for every job: {fig('themis(size_blind=True)')}."
        if "yarn-cs" in at:
            text += (" YARN-CS " + "; ".join(f"{what} {fig(p)}" for p, what in (
                ("yarn-cs(preempt=True)", "with preemption"), ("yarn-cs(max_capacity=1.5)", "capped at 1.5 × quota"),
                ("yarn-cs(max_capacity=1)", "with hard quotas")) if p in at) + ".")
        out.append(text)
    draws = sorted({r["seed"] for r in table if r["group"].startswith("draw ")})
    if draws:
        order = []
        for seed in draws:
            rows = rows_of(table, seed)
            ranked = sorted(("astraea", "themis", "gandiva-fair"), key=lambda p: (rows[p]["sharing_loss_jobs"], p))
            order.append(f"--seed {seed}: " + " < ".join(f"{p} {_pct(rows[p]['sharing_loss_jobs'])}" for p in ranked)
                         + f"; themis with one p̂ {_pct(rows['themis(size_blind=True)']['sharing_loss_jobs'])}, "
                         f"yarn-cs {_pct(rows['yarn-cs']['sharing_loss_jobs'])}, capped at 1.5 × quota "
                         f"{_pct(rows['yarn-cs(max_capacity=1.5)']['sharing_loss_jobs'])}")
        text = "**Other draws of the scenario** (sharing-loss jobs): " + "; ".join(order) + "."
        gaps = [(rows_of(table, seed)["gandiva-fair"], rows_of(table, seed)["astraea"]) for seed in draws]
        first = (_find(table, "gandiva-fair", "Gandiva_fair"), _find(table, "astraea", "ASTRAEA"))
        if None not in first:
            gaps.insert(0, first)  # the main draw
        for m, what in (("sharing_loss_jobs", "sharing-loss jobs"), ("tenant_loss_intervals", "tenant-loss intervals")):
            d = [100 * (g[m] - a[m]) for g, a in gaps]
            text += (f" Gandiva_fair − ASTRAEA in {what} over the {len(d)} draws: {min(d):+.1f} … {max(d):+.1f} points"
                     + (" (either way: a tie within the draws' spread)" if min(d) <= 0 <= max(d) else
                        " (Gandiva_fair lower in every draw)" if max(d) < 0 else " (Gandiva_fair higher in every draw)")
                     + ".")
        out.append(text)
    return out


def rows_of(table: list[dict], seed: int) -> dict[str, dict]:
    """The records of one extra draw, by policy."""
    return {r["policy"]: r for r in table if r["group"] == f"draw {seed}"}


def ablation_markdown(ablations: dict) -> list[str]:
    """The "Why the ranking differs" section (markdown lines) from the summary's `ablations`."""
    table = ablations.get("table") or []
    if not table:
        return []
    out = ["**Why the ranking differs** (ablations: each row is a run of this command, on the Venus-like scenario "
           "unless it says Philly; in brackets the paper's figure where the run stands for its baseline)", "",
           "| baseline | run | sharing-loss jobs | tenant-loss intervals | avg slowdown |", "| --- | --- | ---: | ---: | ---: |"]
    for r in table:
        if r["group"].startswith("draw "):
            continue
        paper = lambda m: "" if r.get(f"paper_{m}") is None else f" [{_pct(r[f'paper_{m}'])}]"  # noqa: E731
        slow = "–" if r["avg_slowdown"] is None else f"{r['avg_slowdown']:,.2f}"
        out.append(f"| {r['group']} | {r['run']} | {_pct(r['sharing_loss_jobs'])}{paper('sharing_loss_jobs')} | "
                   f"{_pct(r['tenant_loss_intervals'])}{paper('tenant_loss_intervals')} | {slow} |")
    out.append("")
    for line in ablations.get("answers") or []:
        out += [line, ""]
    return out
