"""A user's predictor named by import path, as a prediction method (docs/plugins.md).

`check_plugin("package.module:Obj")` imports the object and checks that it is one of the three
kinds below, without fitting anything: what `predictors.methods.check_method_name` does for an
import path, so a wrong name fails before any data is read or any method fitted.
`plugin_method("package.module:Obj", features, config)` resolves the object through the one
plugin route (`atlas_data.plugins.import_object`: working folder first, then installed packages)
and makes a ThreeStage of it:
- a scikit-learn regressor (a class, instantiated without arguments, or an instance): a Stage-1
  learner on y = log1p(p*) through `predictors.stage1.SklearnLearner` (numeric features imputed,
  text context columns encoded), no Stage-2 calibration;
- a ThreeStage: used as it is;
- a function `build(features, config) -> ThreeStage` (what `register_method` takes): called.

May import the Python standard library, atlas_data (errors, plugins) and predictors.{stage1, stage2, framework}.
"""

from __future__ import annotations

import inspect

from atlas_data.errors import InputError
from atlas_data.plugins import import_object, looks_like_import_path, user_code

__all__ = ["looks_like_import_path", "resolve_estimator", "check_plugin", "plugin_method"]


def resolve_estimator(path: str, where: str | None = None):
    """The estimator instance named by `path`; InputError if it cannot be imported or is no regressor."""
    obj = import_object(path, what="estimator", where=where)
    if isinstance(obj, type):
        try:
            with user_code(f"estimator '{path}'", where=where):
                obj = obj()
        except TypeError as exc:
            raise InputError(f"estimator '{path}': cannot be constructed without arguments ({exc})",
                             where=where) from None
    if not (hasattr(obj, "fit") and hasattr(obj, "predict")):
        raise InputError(f"estimator '{path}': not an estimator (needs fit and predict), nor a ThreeStage or a "
                         "build(features, config) function", where=where)
    return obj


def check_plugin(path: str, where: str | None = None) -> None:
    """InputError unless `path` names a usable method (see the module docstring); nothing is fitted
    and a build function is not called (it needs the data's features)."""
    from predictors.framework import ThreeStage

    obj = import_object(path, what="method", where=where)
    if isinstance(obj, ThreeStage) or inspect.isfunction(obj):
        return
    resolve_estimator(path, where)


def plugin_method(path: str, features=(), config=None):
    """A ThreeStage for the object at `path` (see the module docstring)."""
    from predictors.framework import ThreeStage
    from predictors.stage1 import SklearnLearner
    from predictors.stage2 import Passthrough

    obj = import_object(path, what="method")
    if isinstance(obj, ThreeStage):
        return obj
    if inspect.isfunction(obj):
        with user_code(f"method '{path}'"):
            built = obj(tuple(features), config)
        if not isinstance(built, ThreeStage):
            raise InputError(f"method '{path}': build(features, config) returned {type(built).__name__}, not a ThreeStage")
        return built
    return ThreeStage({"main": SklearnLearner(resolve_estimator(path))}, Passthrough("main"))
