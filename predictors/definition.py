"""What a prediction method *is*, as a hash: the key that makes the p̂ cache code-aware.

`method_definition(name, features, config)` hashes the package version, the source of the module
that defines the method's build function (a registered method, a user's plugin module), and for
every component of the unfitted ThreeStage (each Stage-1 learner, the Stage-2 combiner, and any
estimator among their parameters) its class, the code of the module that defines that class and
its constructor parameters. Code is the file's bytes for modules of this project or of the user
(the working folder, a `--plugins` file) and `distribution==version` for installed third-party
packages (scikit-learn, LightGBM…). Editing a plugin, a parameter or a built-in learner changes
the hash, so `predictors.api.predict_test` refits instead of serving stale predictions.

May import the standard library, scikit-learn, atlas_data (io, plugins) and predictors.*.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

_INSTALLED = tuple(str(Path(p).resolve()) for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})


def method_definition(name: str, features, config) -> str:
    """sha256 hex of everything that decides what `name` predicts, besides the data and the seed."""
    from atlas_data.io import package_version
    from atlas_data.plugins import user_code
    from predictors.methods import METHODS, REFERENCE_METHODS, build_method, is_plugin_method

    h = hashlib.sha256(f"atlas-bench {package_version()}\n".encode())
    h.update(f"method {name}\n".encode())
    for runner in ("predictors.framework", "predictors.data"):  # how every method is fitted and fed
        h.update(f"{runner}[{module_code(runner)}]\n".encode())
    if name in REFERENCE_METHODS:
        return h.hexdigest()
    spec = METHODS.get(name)
    if spec is not None:
        h.update(code_of(spec.build).encode())
    method = build_method(name, features, config)
    # a plugin's get_params, __repr__ or properties are its code too: what they raise names it
    with (user_code(f"method '{name}'") if is_plugin_method(name) else contextlib.nullcontext()):
        for label in sorted(method.stage1):
            h.update(f"stage1 {label}: {describe(method.stage1[label])}\n".encode())
        h.update(f"stage2: {describe(method.stage2)}\n".encode())
    return h.hexdigest()


def describe(obj) -> str:
    """Class, code of its module and parameters of an estimator (recursively); repr for other values."""
    if hasattr(obj, "get_params") and not isinstance(obj, type):
        params = obj.get_params(deep=False)
        inner = ", ".join(f"{k}={describe(params[k])}" for k in sorted(params))
        cls = type(obj)
        return f"{cls.__module__}.{cls.__qualname__}[{module_code(cls.__module__)}]({inner})"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(describe(v) for v in obj) + "]"
    if callable(obj):
        return code_of(obj)
    return repr(obj)


def code_of(func) -> str:
    """The code a callable comes from: its module's code, plus its own bytecode for lambdas and closures."""
    module = getattr(func, "__module__", None)
    own = getattr(func, "__code__", None)
    text = f"{module}.{getattr(func, '__qualname__', type(func).__qualname__)}[{module_code(module)}]"
    if own is not None:
        text += hashlib.sha256(own.co_code + repr(own.co_consts).encode()).hexdigest()[:16]
    return text


@lru_cache(maxsize=None)
def _file_hash(path: str, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _distributions() -> dict:
    from importlib import metadata

    return metadata.packages_distributions()


def module_code(module_name: str | None) -> str:
    """`dist==version` for an installed third-party module, the sha256 of its file otherwise."""
    module = sys.modules.get(module_name or "")
    path = getattr(module, "__file__", None)
    if not path:
        return "no-file"
    resolved = str(Path(path).resolve())
    if resolved.startswith(_INSTALLED):
        from importlib import metadata

        top = module_name.split(".")[0]
        dists = _distributions().get(top) or [top]
        try:
            return f"{dists[0]}=={metadata.version(dists[0])}"
        except metadata.PackageNotFoundError:
            pass
    return _file_hash(resolved, Path(resolved).stat().st_mtime_ns)
