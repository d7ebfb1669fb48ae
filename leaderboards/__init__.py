"""Leaderboards (docs/leaderboards.md): validate, score, store and render submissions of test-split predictions.

schema (submission and entry formats) -> validate (a submission folder) -> score (prediction
metrics; p̂ through the predictive schedulers) -> store (atomic JSON entries under entries/) ->
render (Markdown / HTML rankings) and site (the static site). pipeline wires them for `benchmark submit`; builtin pre-scores
the built-in predictors. See leaderboards/README.md.

May import atlas_data, predictors, schedulers and benchmark.results / tracking / tasks; nothing in
those packages imports leaderboards.
"""

import atlas_data.blas  # noqa: F401 -- first: pins OpenBLAS's kernels before numpy loads (atlas_data/blas.py)
