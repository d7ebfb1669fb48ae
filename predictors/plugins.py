"""A user's own estimator, named by import path, as a prediction method.

`resolve_estimator("package.module:Class")` or `("package.module.Class")` imports the object;
a class is instantiated without arguments, an instance is used as is (cloned on fit). Any
scikit-learn regressor becomes a Stage-1 learner on y = log1p(p*) through
`predictors.stage1.SklearnLearner`, with no Stage-2 calibration.

May import the Python standard library, atlas_data.errors and predictors.{stage1, stage2, framework}.
"""

from __future__ import annotations

import importlib

from atlas_data.errors import InputError


def looks_like_import_path(name: str) -> bool:
    return ":" in name or "." in name


def resolve_estimator(path: str):
    """The estimator instance named by `path`; InputError if it cannot be imported or is no regressor."""
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise InputError(f"estimator {path!r}: expected 'package.module:Class' or 'package.module.Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"estimator {path!r}: cannot import module {module_name!r} ({exc})") from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"estimator {path!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as exc:
            raise InputError(f"estimator {path!r}: cannot be constructed without arguments ({exc})") from exc
    if not (hasattr(obj, "fit") and hasattr(obj, "predict")):
        raise InputError(f"estimator {path!r}: not an estimator (needs fit and predict)")
    return obj


def plugin_method(path: str):
    """A ThreeStage for the estimator at `path`: Stage 1 = the estimator on y, Stage 2 = none."""
    from predictors.framework import ThreeStage
    from predictors.stage1 import SklearnLearner
    from predictors.stage2 import Passthrough

    return ThreeStage({"main": SklearnLearner(resolve_estimator(path))}, Passthrough("main"))
