"""The one route by which user code enters the benchmark (docs/plugins.md).

- `import_object("package.module:Obj")` (or `package.module.Obj`): the module is imported from the
  working folder first, then from the installed packages — for `--methods`, `--predictor`,
  `--policies` and `submit --method` alike.
- `load_plugins("mod_a,my_file.py")`: `--plugins` modules or Python files, imported before the
  command runs (they register policies with `schedulers.policy.register` or methods with
  `predictors.methods.register_method`); a file is importable afterwards under its stem, so
  `my_file:Obj` names an object in it.
- `load_entry_points()`: every entry point of the group `atlas_bench.plugins` of the installed
  packages is loaded once, the first time a registry is asked for its names.
- `user_code(label)`: whatever a plugin raises becomes a `PluginError` (an InputError: exit 2, one
  line naming the plugin and what it raised) instead of an internal error — any exception, and
  `SystemExit` (`sys.exit(0)` in a plugin must not end the command as a success), `GeneratorExit`
  and a `KeyboardInterrupt` the plugin raised itself. A KeyboardInterrupt that a signal (Ctrl-C,
  SIGTERM) raised inside plugin code stays an interrupt (exit 130): which one it is, only the
  command line's signal handling knows (benchmark.interrupts, a layer this module may not
  import), so it tells this module with `judge_interrupts_with(test)`; without a test (the
  Python API, a notebook) every KeyboardInterrupt is taken for a Ctrl-C.
- `is_plugin(obj)`: defined outside this project's packages.

May import the standard library and atlas_data.errors only.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Callable

from atlas_data.errors import InputError

ENTRY_POINT_GROUP = "atlas_bench.plugins"
PROJECT_PACKAGES = ("atlas_data", "predictors", "schedulers", "leaderboards", "benchmark")
_loaded_entry_points = False


class PluginError(InputError):
    """User code (a plugin) failed: exit 2 with one line naming the plugin and the exception."""


def looks_like_import_path(text: str) -> bool:
    return ":" in text or "." in text


def _working_folder_first() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # a module next to the user's working directory
    importlib.invalidate_caches()


def _import_module(name: str, label: str, where: str | None):
    _working_folder_first()
    with user_code(f"{label}: importing module '{name}'", where=where):  # the module's own code runs here
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise InputError(f"{label}: cannot import module '{name}' ({exc})", where=where) from None


def import_object(spec: str, *, what: str = "plugin", where: str | None = None):
    """The object named `package.module:Obj` (or `package.module.Obj`)."""
    module_name, _, attr = spec.partition(":") if ":" in spec else spec.rpartition(".")
    label = f"{what} '{spec}'"
    if not module_name or not attr:
        raise InputError(f"{label}: expected 'package.module:Object' or 'package.module.Object'", where=where)
    obj = _import_module(module_name, label, where)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"{label}: module '{module_name}' has no attribute '{attr}'", where=where)
        obj = getattr(obj, part)
    return obj


def plugin_items(text: str | None) -> tuple[str, ...]:
    """The items of a `--plugins` value: module names or .py files, comma-separated (blank items skipped)."""
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


def load_plugins(items, where: str = "--plugins") -> list[str]:
    """Import `--plugins` items (module names or .py files: the comma-separated text, or its items as
    `plugin_items` gives them); return the module names."""
    names = []
    for item in plugin_items(items) if items is None or isinstance(items, str) else items:
        path = Path(item)
        if item.endswith(".py") or path.is_file():
            if not path.is_file():
                raise InputError(f"plugin file '{item}' does not exist", where=where)
            name = path.stem
            if not name.isidentifier():
                raise InputError(f"plugin file '{item}': its name must be a Python identifier", where=where)
            loaded = _module_of_file(path)
            if loaded is not None:  # already imported (as a module or by an earlier --plugins): reuse it
                sys.modules.setdefault(name, loaded)
                names.append(name)
                continue
            spec = importlib.util.spec_from_file_location(name, path.resolve())
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # so that 'stem:Obj' resolves to this file
            try:
                with user_code(f"plugin file '{item}'", where=where):
                    spec.loader.exec_module(module)
            except BaseException:  # the user's file failed (or was interrupted): it is not importable
                sys.modules.pop(name, None)
                raise
        else:
            _import_module(item, f"plugin module '{item}'", where)
            name = item
        names.append(name)
    return names


def _module_of_file(path: Path):
    target = path.resolve()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve() == target:
            return module
    return None


def load_entry_points() -> None:
    """Load every `atlas_bench.plugins` entry point of the installed packages (once per process)."""
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    from importlib import metadata

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        with user_code(f"entry point '{ep.name} = {ep.value}' ({ENTRY_POINT_GROUP})"):
            ep.load()


def is_plugin(obj) -> bool:
    """Defined outside this project's packages (a user's or a third party's code)."""
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] not in PROJECT_PACKAGES


_may_be_signal: Callable[[], bool] | None = None


def judge_interrupts_with(test: Callable[[], bool] | None) -> Callable[[], bool] | None:
    """`test()`: whether a KeyboardInterrupt seen now may have been raised by a signal (False: nothing
    was received, so the code that raised it did so itself). None: every one is taken for a signal's.
    Returns the test it replaces, which a command puts back when it ends (the Python API after it)."""
    global _may_be_signal
    previous, _may_be_signal = _may_be_signal, test
    return previous


@contextlib.contextmanager
def user_code(label: str, where: str | None = None):
    """Run user code: whatever it raises, except bad input and a signal's interrupt, becomes one
    PluginError line naming `label` (see the module docstring)."""
    try:
        yield
    except InputError:
        raise
    except KeyboardInterrupt as exc:
        if _may_be_signal is None or _may_be_signal():
            raise  # Ctrl-C or SIGTERM while the plugin ran: an interrupt like any other
        said = f": {_one_line(exc)}" if str(exc).strip() else ""
        raise PluginError(f"{label} raised KeyboardInterrupt itself (no signal was received){said}",
                          where=where) from exc
    except SystemExit as exc:  # sys.exit() in a plugin: the command has not finished, whatever the code says
        raise PluginError(f"{label} called sys.exit({exc.code!r}) (raised SystemExit): plugin code may not end "
                          "the command", where=where) from exc
    except (Exception, GeneratorExit) as exc:  # noqa: BLE001 - whatever the plugin raised
        raise PluginError(f"{label} raised {type(exc).__name__}: {_one_line(exc)}", where=where) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or "(no message)"
