"""Job-duration prediction for ATLAS-Bench: the three-stage framework of LASched.

Stage 1 fits base learners on train (`stage1`), Stage 2 fits calibrators / stackers on
validation predictions (`stage2`), Stage 3 predicts test (`framework.ThreeStage`); `data.SplitData`
hands each stage only its split. `methods` is the registry of named methods, `metrics` the
scores, `plugins` resolves a user's scikit-learn regressor by import path, and `api.predict_test`
is what the scheduling task calls.

May import atlas_data, numpy, pandas, scipy, scikit-learn, lightgbm — never schedulers or benchmark.
"""

import atlas_data.blas  # noqa: F401 -- first: pins OpenBLAS's kernels before numpy loads (atlas_data/blas.py)
