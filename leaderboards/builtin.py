"""Pre-score the built-in prediction methods on a dataset (default: the embedded default dataset).

`rebuild_builtin()` runs every method shipped with the package for the leaderboards (`predictors.methods.LEADERBOARD_METHODS`:
the built-ins but those trained for the decision, which `methods=` can still name) through
`predict_test` (cached in DS/predictions/), checks its predictions with the same rules as a
submission (`leaderboards.validate.check_predictions`), scores them for both tracks and writes
one entry per method and track. `oracle` (p̂ = p) is stored as a reference entry: shown, not
ranked. `benchmark leaderboard --rebuild-builtin` calls this; the resulting entries for the
default dataset are committed under leaderboards/entries/.

May import predictors (api, methods), atlas_data and leaderboards.*.
"""

from __future__ import annotations

from pathlib import Path

from leaderboards import score as scoring
from leaderboards.pipeline import load_test, score_entry
from leaderboards.schema import BUILTIN_AUTHORS, TRACKS, Submission
from leaderboards.store import default_entries_dir, write_entry
from leaderboards.validate import check_predictions

__all__ = ["BUILTIN_AUTHORS", "rebuild_builtin"]


def rebuild_builtin(ds_dir: Path | str | None = None, entries_dir: Path | str | None = None, *,
                    methods: list[str] | None = None, tracks=TRACKS, seed: int = 0, quiet: bool = True,
                    note=None) -> list[Path]:
    """Score built-in methods for `tracks`; return the written entry paths."""
    from predictors.api import predict_test
    from predictors.methods import LEADERBOARD_METHODS, METHODS, REFERENCE_METHODS

    note = note or (lambda message: None)
    entries_dir = Path(entries_dir) if entries_dir is not None else default_entries_dir()
    dataset = load_test(ds_dir, quiet)
    names = list(methods) if methods else list(LEADERBOARD_METHODS)  # never a plugin: these are the package's
    written = []
    for method in names:
        preds = predict_test(dataset.path, method, seed=seed, quiet=quiet)
        preds = check_predictions(preds, dataset.test["job_id"], f"built-in method {method}")
        scheduling = None
        if "scheduling" in tracks:
            scheduling = scoring.score_scheduling(preds, dataset.test, blind_p_hat=dataset.blind_p_hat, seed=seed)
        spec = METHODS.get(method)
        for track in tracks:
            submission = Submission(
                name=method, authors=BUILTIN_AUTHORS, description=spec.description if spec else method, url="",
                track=track, dataset_fingerprint=str(dataset.card["fingerprint"]).lower(),
            )
            entry = score_entry(submission, preds, dataset, seed=seed, builtin=True,
                                reference=method in REFERENCE_METHODS, scheduling=scheduling)
            path, _ = write_entry(entry, entries_dir)
            written.append(path)
        score = (scheduling or {}).get("score") or {}
        note(f"{method}: cov25 {entry['prediction']['cov25']:.3f}"
             + (f", scheduling score {score['mean']:.4f} [{score['lo']:.4f}, {score['hi']:.4f}]" if score.get("mean") else ""))
    return written
