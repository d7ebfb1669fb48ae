"""The issue's "done when" ordering, on a dataset built by the real ATLAS pipeline (not a fixture frame)."""

import pytest

from atlas_data.build import build_dataset
from predictors.api import predict_test
from predictors.data import SplitData
from predictors.metrics import evaluate


@pytest.fixture(scope="module")
def pipeline_dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("atlas") / "ds"
    build_dataset(out, source="synthetic", jobs=12_000, seed=3)
    return out


def test_lgbm_meta_beats_single_stage_beats_constant(pipeline_dataset):
    split, _ = SplitData.from_folder(pipeline_dataset)
    truth = split.test_truth()
    scores = {}
    for method in ("constant", "single-stage", "lgbm-meta"):
        p_hat = predict_test(pipeline_dataset, method, cache=False).set_index("job_id")
        assert sorted(p_hat.index) == sorted(truth.index)  # exactly the test split
        p_hat = p_hat.loc[truth.index, "p_hat"]
        scores[method] = evaluate(p_hat.to_numpy(), truth["p_star"].to_numpy(), truth["is_recurrent"].to_numpy())
    print({m: (round(s["rmsle"], 3), round(s["cov25"], 3)) for m, s in scores.items()})
    assert scores["lgbm-meta"]["rmsle"] < scores["single-stage"]["rmsle"] < scores["constant"]["rmsle"]
    assert scores["lgbm-meta"]["cov25"] > scores["single-stage"]["cov25"] > scores["constant"]["cov25"]
