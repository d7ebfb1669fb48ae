"""Sweep configs: read and check a YAML file, and expand it into cells (one `benchmark run` each).

    task: scheduling                      # required: a `benchmark run --task` name
    jobs: traces/a.csv                    # or data: DS — a path or a list of paths (each a cell);
                                          # relative paths are relative to the config file;
                                          # neither = the ATLAS default dataset
    objectives: [total_completion, max_stretch]
    policies: [spjf, sprpt, prr, srpt, rr]   # ONE policy list, run together in every cell;
                                             # a list of lists = one cell per inner list
    noise: [0, 0.5, 1, 2]                 # one cell per σ, so the cell's predictor is `noise:σ`
    predictors: [lgbm-meta]               # one cell per learned predictor (fitted on the dataset's,
                                          # or the jobs table's, train/validation part)
    seeds: [0, 1]
    n: [2000]
    machines: [5, [10, 20]]               # an inner list = one cell running all its counts (makespan
                                          # cells only: the other objectives run on one machine)
    nodes: [4, 8]                         # fairness: cluster sizes
    lease: [300, 900, 1800]               # fairness: lease lengths, s
    options: {prr-lambda: 0.5}            # fixed extra `benchmark run` options for every cell
    mlflow: false                         # same as --no-mlflow
    max_cells: 20000                      # refuse larger sweeps (default 10,000; --max-cells wins)

Axes: dataset × objectives × policies × prediction source × seeds × n × machines × nodes × lease, where
the prediction source is one entry of `predictors` or one entry of `noise` (both are ways to get
p̂, crossing them would run every noise level once per learned predictor). `machines` crosses the
`makespan` cells only: with `objectives: [total_completion, makespan]` each makespan cell runs once
per machines entry and each total_completion cell once (on one machine); `machines` without a
makespan objective is exit 2 (it would change nothing). A scalar stands for a
one-element list. Policies are not crossed one by one: a run already loops over its policies and
shares the jobs, the window and the reference (SRPT / S*) between them, so one run per policy
would only repeat that work. Policies that need no p̂ therefore run again in every noise cell and
appear once per cell (their value does not depend on σ). Files named by `jobs`/`data` are not
checked here: a missing one fails its cells only (a remote worker may see paths this host does not).
Cell ids are `<index>-<the values of the axes that vary>`, e.g. `0003-max_stretch-noise0.5-seed1`.
The cell count is checked before anything is expanded: more than `max_cells` (DEFAULT_MAX_CELLS
unless the config or `--max-cells` says otherwise) is exit 2, so a typo such as `seeds: 100000` does
not start 100,000 runs. The file must be a regular UTF-8 file within the YAML limits of
atlas_data.yamlio (docs/data-formats.md#limits).

May import benchmark.cli (the run parser), benchmark.options (the bounds of every number), benchmark.commands.run (task names), benchmark.tasks.config (a cell's configuration), benchmark.tasks.inputs (its policies resolved), schedulers.objectives,
schedulers.policy, predictors.methods (names checked before any cell), atlas_data.errors, atlas_data.yamlio.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas_data.errors import InputError, shown
from benchmark.options import MAX_CELLS_LIMIT, machine_count

SWEEP_KEYS = ("objectives", "policies", "predictors", "noise", "seeds", "n", "machines", "nodes", "lease")
CONFIG_KEYS = ("task", "jobs", "data", *SWEEP_KEYS, "options", "mlflow", "max_cells")
DEFAULT_MAX_CELLS = 10_000  # far above any sweep in the docs, far below one that would run for weeks
# the options a sweep key already sets (or the sweep itself): not allowed under `options`
_MANAGED_OPTIONS = {"task", "jobs", "data", "objective", "policies", "predictor", "methods", "noise", "seed", "n",
                    "machines", "nodes", "lease", "output", "quiet", "no-mlflow"}
_OPTION_TO_KEY = {"--task": "task", "--jobs": "jobs", "--data": "data", "--objective": "objectives",
                  "--policies": "policies", "--predictor": "predictors", "--noise": "noise", "--seed": "seeds",
                  "--n": "n", "--machines": "machines", "--nodes": "nodes", "--lease": "lease"}


# ----- config ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepConfig:
    path: str
    task: str
    datasets: tuple[str | None, ...] = (None,)    # paths as written in the config; None = default
    dataset_option: str | None = None              # "jobs" or "data"
    objectives: tuple[str | None, ...] = (None,)
    policies: tuple[str | None, ...] = (None,)     # comma-joined policy lists, one per cell
    predictors: tuple[str, ...] = ()
    noise: tuple[float, ...] = ()
    seeds: tuple[int | None, ...] = (None,)
    n: tuple[int | None, ...] = (None,)
    machines: tuple[str | None, ...] = (None,)    # "5" or "10,20"
    nodes: tuple[int | None, ...] = (None,)
    lease: tuple[float | None, ...] = (None,)      # lease lengths, s (fairness)
    options: tuple[tuple[str, Any], ...] = ()
    mlflow: bool = True
    max_cells: int = DEFAULT_MAX_CELLS

    @property
    def base_dir(self) -> Path:
        return Path(self.path).resolve().parent


def load_config(path: str | Path) -> SweepConfig:
    """Read and validate a sweep YAML file; any problem is an InputError naming the file and key."""
    from atlas_data.yamlio import load_yaml_file

    path = str(path)
    # not a regular file of at most 1 MB, invalid YAML, a key given twice, an alias bomb: an InputError
    raw = load_yaml_file(path, "sweep config")
    if not isinstance(raw, dict):
        raise InputError("a sweep config must be a mapping of keys (task, objectives, policies, ...)", path=path)

    def fail(key: str, message: str):
        raise InputError(message, path=path, where=str(key))

    for key in raw:
        if key not in CONFIG_KEYS:
            fail(key, f"unknown key '{key}' (allowed: {', '.join(CONFIG_KEYS)})")
    from benchmark.commands.run import TASKS

    task = raw.get("task")
    if task is None:
        fail("task", f"missing key 'task' (one of {', '.join(sorted(TASKS))})")
    if not isinstance(task, str) or task not in TASKS:
        fail("task", f"task must be one of {', '.join(sorted(TASKS))}, got {shown(task)}")
    if "jobs" in raw and "data" in raw:
        fail("jobs", "give either 'jobs' or 'data', not both")

    dataset_option = "jobs" if "jobs" in raw else ("data" if "data" in raw else None)
    datasets = _scalars(raw, dataset_option, "str", fail) if dataset_option else None
    objectives = _scalars(raw, "objectives", "str", fail)
    if task == "scheduling" and objectives:
        from schedulers.objectives import OBJECTIVES

        for objective in objectives:
            if objective not in OBJECTIVES:
                fail("objectives", f"unknown objective '{objective}' (choose from {', '.join(OBJECTIVES)})")
    noise = _scalars(raw, "noise", "number", fail)
    if noise:
        from benchmark.tasks.inputs import MAX_NOISE

        if any(not 0 <= s <= MAX_NOISE for s in noise):
            fail("noise", f"noise levels must be from 0 to {MAX_NOISE:g} (docs/evaluation-protocol.md), got {noise}")
    seeds = _scalars(raw, "seeds", "int", fail)
    if seeds and any(v < 0 for v in seeds):  # the rule of every --seed (benchmark.options.seed)
        fail("seeds", f"seeds must be integers >= 0, got {seeds}")
    n = _positive("n", _scalars(raw, "n", "int", fail), fail)
    nodes = _positive("nodes", _scalars(raw, "nodes", "int", fail), fail)
    if nodes:
        from benchmark.tasks.config import MAX_NODES

        if max(nodes) > MAX_NODES:
            fail("nodes", f"at most {MAX_NODES:,} nodes (docs/fairness.md#the-cluster-model), got {max(nodes):,}")
    lease = _scalars(raw, "lease", "number", fail)
    if lease and any(v <= 0 for v in lease):
        fail("lease", f"lease lengths must be > 0 seconds, got {lease}")
    if lease and task != "fairness":
        # checked here: a lease equal to the run parser's default would pass the argv check unnoticed
        fail("lease", f"'lease' is an axis of task fairness (--lease), not of task {task}")
    predictors = _scalars(raw, "predictors", "str", fail)
    policies = tuple(_policy_lists(raw, fail)) if "policies" in raw else (None,)
    machines = tuple(_machine_lists(raw, fail)) if "machines" in raw else (None,)
    options = _extra_options(raw, fail)
    mlflow = _flag(raw, "mlflow", fail)
    max_cells = _max_cells(raw, fail)
    if task == "scheduling" and not objectives:
        fail("objectives", "task scheduling needs 'objectives' (total_completion, max_stretch and/or makespan)")
    return SweepConfig(
        path=path,
        task=task,
        datasets=tuple(datasets) if datasets else (None,),
        dataset_option=dataset_option,
        objectives=tuple(objectives) if objectives else (None,),
        policies=policies,
        predictors=tuple(predictors or ()),
        noise=tuple(noise or ()),
        seeds=tuple(seeds) if seeds else (None,),
        n=tuple(n) if n else (None,),
        machines=machines,
        nodes=tuple(nodes) if nodes else (None,),
        lease=tuple(lease) if lease else (None,),
        options=options,
        mlflow=mlflow,
        max_cells=max_cells,
    )


def _listed(raw: dict, key: str, fail) -> list | None:
    """The values of `key` as a list (a scalar is a list of one), None when absent; empty is refused."""
    if key not in raw:
        return None
    value = raw[key]
    values = value if isinstance(value, list) else [value]
    if not values or value is None:
        fail(key, f"'{key}' is empty: give at least one value")
    return values


def _scalars(raw: dict, key: str, kind: str, fail) -> list | None:
    """The distinct values of `key`, each of `kind` ("str": non-empty text, stripped; "int"; "number":
    finite, as a float); None when absent."""
    values = _listed(raw, key, fail)
    if values is None:
        return None
    out = []
    for v in values:
        if kind == "str" and isinstance(v, str) and v.strip():
            out.append(v.strip())
        elif kind == "int" and isinstance(v, int) and not isinstance(v, bool):
            out.append(v)
        elif kind == "number" and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
        else:
            wanted = {"str": "a non-empty string", "int": "an integer", "number": "a finite number"}[kind]
            if key == "noise":  # the one number key: its own range, not just "finite"
                from benchmark.tasks.inputs import MAX_NOISE

                wanted = f"a number from 0 to {MAX_NOISE:g}"
            if kind != "str" and isinstance(v, str):  # YAML reads 1e3 (no dot) as text, not as a number
                wanted += " (YAML reads a number such as 1e3 without a dot as text: write 1.0e3)"
            fail(key, f"every '{key}' value must be {wanted}, got {shown(v)}")
    if len(set(out)) < len(out):
        fail(key, f"duplicate value in '{key}': {out}")
    return out


def _positive(key: str, values: list | None, fail) -> list | None:
    if values is not None and any(v < 1 for v in values):
        fail(key, f"'{key}' values must be >= 1, got {values}")
    return values


def _max_cells(raw: dict, fail) -> int:
    max_cells = raw.get("max_cells", DEFAULT_MAX_CELLS)
    if not isinstance(max_cells, int) or isinstance(max_cells, bool) or max_cells < 1:
        fail("max_cells", f"'max_cells' must be an integer >= 1, got {shown(max_cells)}")
    if max_cells > MAX_CELLS_LIMIT:
        fail("max_cells", f"'max_cells' is at most {MAX_CELLS_LIMIT:,} (docs/data-formats.md#limits), got {max_cells:,}")
    return max_cells


def _names(value, key: str, fail) -> str:
    """One comma-joined list from 'a,b' or [a, b]."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            fail(key, f"'{key}' must hold names (strings), got {shown(item)}")
        names += [t.strip() for t in item.split(",") if t.strip()]
    if not names:
        fail(key, f"'{key}' holds an empty list")
    if len(set(names)) < len(names):
        fail(key, f"duplicate name in '{key}': {names}")
    return ",".join(names)


def _policy_lists(raw: dict, fail) -> list[str]:
    value = raw["policies"]
    if value is None or value == []:
        fail("policies", "'policies' is empty: give at least one policy")
    if isinstance(value, list) and any(isinstance(v, list) for v in value):
        if not all(isinstance(v, list) for v in value):
            fail("policies", "'policies' must be a list of names or a list of lists, not a mix")
        lists = [_names(v, "policies", fail) for v in value]
    else:
        lists = [_names(value, "policies", fail)]
    if len(set(lists)) < len(lists):
        fail("policies", "duplicate policy list in 'policies'")
    return lists


def _machine_lists(raw: dict, fail) -> list[str]:
    value = raw["machines"]
    entries = value if isinstance(value, list) else [value]
    if not entries or value is None:
        fail("machines", "'machines' is empty: give at least one machine count")
    out = []
    for entry in entries:
        counts = entry if isinstance(entry, list) else [entry]
        if not counts or not all(isinstance(m, int) and not isinstance(m, bool) and m >= 1 for m in counts):
            fail("machines", f"machine counts must be integers >= 1, got {shown(entry)}")
        for m in counts:  # the bound of `benchmark run --machines` (checked when a run starts, so here too)
            try:
                machine_count(str(m))
            except argparse.ArgumentTypeError as exc:
                fail("machines", str(exc))
        out.append(",".join(str(m) for m in counts))
    if len(set(out)) < len(out):
        fail("machines", f"duplicate value in 'machines': {entries}")
    return out


def _extra_options(raw: dict, fail) -> tuple[tuple[str, Any], ...]:
    value = raw.get("options")
    if value is None and "options" not in raw:
        return ()
    if not isinstance(value, dict) or not value:
        fail("options", "'options' must be a non-empty mapping of `benchmark run` options to values")
    out = []
    for name, v in value.items():
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            fail("options", f"option names are written without dashes in front, like prr-lambda; got {shown(name)}")
        if name in _MANAGED_OPTIONS:
            fail("options", f"'{name}' is set by the sweep keys (task, jobs/data, objectives, policies, ...), not options")
        if isinstance(v, (list, dict)) or v is None:
            fail("options", f"option '{name}' must have one value (string, number or true/false), got {shown(v)}")
        out.append((name, v))
    return tuple(out)


def _flag(raw: dict, key: str, fail) -> bool:
    value = raw.get(key, True)
    if not isinstance(value, bool):
        fail(key, f"'{key}' must be true or false, got {shown(value)}")
    return value


# ----- cells ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One `benchmark run` of the sweep: its argv (without --output/--quiet/--no-mlflow) and coordinates."""

    index: int
    id: str
    argv: tuple[str, ...]
    task: str
    objective: str | None = None
    dataset: str | None = None
    policies: str | None = None
    predictor: str | None = None
    noise: float | None = None
    seed: int | None = None
    n: int | None = None
    machines: str | None = None
    nodes: int | None = None
    lease: float | None = None


def cell_count(config: SweepConfig) -> int:
    """How many cells the config expands to, without expanding it."""
    axes = _axes(config)
    others = math.prod(len(axis) for i, axis in enumerate(axes) if i not in (_OBJECTIVE_AXIS, _MACHINES_AXIS))
    return others * sum(len(_machines_of(config, objective)) for objective in config.objectives)


_OBJECTIVE_AXIS, _MACHINES_AXIS = 1, 6


def _machines_of(config: SweepConfig, objective: str | None) -> tuple[str | None, ...]:
    """The machines axis of an objective's cells: a makespan objective among others crosses it, the
    others (scheduled on one machine) run once. Alone, every objective gets the axis as written, so
    `machines` without makespan reaches the run parser and is refused there."""
    mixed = "makespan" in config.objectives and len(config.objectives) > 1
    if mixed and objective != "makespan":
        return (None,)
    return config.machines


def _axes(config: SweepConfig) -> tuple[tuple, ...]:
    sources: list[tuple[str | None, float | None]] = [(p, None) for p in config.predictors]
    sources += [(None, s) for s in config.noise]
    return (config.datasets, config.objectives, config.policies, tuple(sources or [(None, None)]), config.seeds,
            config.n, config.machines, config.nodes, config.lease)


def cells(config: SweepConfig) -> list[Cell]:
    """The cross product of the config's axes, in config order; every argv is checked by the run parser.

    More cells than config.max_cells is an InputError before anything is expanded.
    """
    count = cell_count(config)
    if count > config.max_cells:
        sizes = " x ".join(str(len(axis)) for axis in _axes(config) if len(axis) > 1)
        raise InputError(f"the config expands to {count:,} cells ({sizes}), more than the limit of "
                         f"{config.max_cells:,}: shorten a list, or raise the limit with --max-cells or the "
                         "'max_cells' key", path=config.path, where="max_cells")
    axes = _axes(config)
    varying = [len(axis) > 1 for axis in axes]
    out: list[Cell] = []
    # an objective whose cells do not cross `machines` keeps one combination of the others (machines None)
    combos = [combo for combo in itertools.product(*axes)
              if _machines_of(config, combo[_OBJECTIVE_AXIS]) != (None,) or combo[_MACHINES_AXIS] == axes[_MACHINES_AXIS][0]]
    for index, (dataset, objective, policies, (predictor, noise), seed, n, machines, nodes, lease) in enumerate(combos):
        if _machines_of(config, objective) == (None,):
            machines = None
        argv = ["run", "--task", config.task]
        if dataset is not None:
            resolved = Path(dataset) if Path(dataset).is_absolute() else config.base_dir / dataset
            argv += [f"--{config.dataset_option}", str(resolved)]
        values = [("objective", objective), ("policies", policies), ("predictor", predictor),
                  ("noise", None if noise is None else repr(noise)), ("seed", seed), ("n", n),
                  ("machines", machines), ("nodes", nodes), ("lease", None if lease is None else repr(lease))]
        argv += [item for name, v in values if v is not None for item in (f"--{name}", str(v))]
        for name, v in config.options:
            if v is True:
                argv.append(f"--{name}")
            elif v is not False:
                argv += [f"--{name}", str(v)]
        labels = [Path(dataset).stem if dataset else None, objective, f"p{config.policies.index(policies)}",
                  predictor or f"noise{noise:g}" if (predictor or noise is not None) else None,
                  f"seed{seed}", f"n{n}", f"m{machines}" if machines is not None else None, f"nodes{nodes}", f"lease{lease:g}" if lease is not None else None]
        slug = "-".join(str(label) for label, vary in zip(labels, varying) if vary and label is not None)
        cell_id = f"{index:04d}" + (f"-{re.sub(r'[^A-Za-z0-9_.=+-]', '_', slug)}" if slug else "")
        out.append(Cell(index=index, id=cell_id, argv=tuple(argv), task=config.task, objective=objective,
                        dataset=dataset, policies=policies, predictor=predictor, noise=noise, seed=seed, n=n,
                        machines=machines, nodes=nodes, lease=lease))
    from benchmark.cli import build_parser

    parser = build_parser(["run"])
    for cell in out:
        _check_argv(parser, cell, config)
    return out


def _check_argv(parser, cell: Cell, config: SweepConfig) -> None:
    """Parse the cell's argv now, so an option `benchmark run` rejects is exit 2 before any work."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            parsed = parser.parse_args(list(cell.argv) + ["--output", "x", "--quiet", "--no-mlflow"])
    except SystemExit:
        message = last_line(captured.getvalue()) or "rejected by `benchmark run`"
        message = re.sub(r"^benchmark run: ", "", message)
        option = re.search(r"--[a-z][a-z-]*", message)
        key = _OPTION_TO_KEY.get(option.group(0), "options") if option else "options"
        raise InputError(f"`benchmark run` rejects it: {message}", path=config.path, where=key) from None
    from benchmark.commands.run import load_plugins
    from benchmark.tasks.config import from_namespace

    try:  # the cell's configuration, as `benchmark run` builds it: an option of another task, a cluster
        # beyond the simulator's bound, ... refused now, not in every cell
        parsed = from_namespace(parsed)
    except InputError as exc:
        key = _OPTION_TO_KEY.get(exc.where, "options")
        raise InputError(f"`benchmark run` rejects it: {exc.problem}", path=config.path, where=key) from None
    try:
        load_plugins(parsed.plugins)  # they may register policies or prediction methods
    except InputError as exc:
        raise InputError(f"`benchmark run` rejects it: {exc.problem}", path=config.path, where="options") from None
    if parsed.predictor:  # an unknown method: refused now, not after every cell failed
        from predictors.methods import check_method_name

        try:
            for name in parsed.predictor:  # the items, parsed when the configuration was made
                check_method_name(name, where="--predictor")
        except InputError as exc:
            raise InputError(f"`benchmark run` rejects it: {exc.problem}", path=config.path, where="predictors") from None
    if getattr(parsed, "policies", None):  # a policy name or parameter the run refuses: refused now, not in every cell
        from benchmark.tasks.inputs import resolve_policies
        from schedulers.policy import task_kind

        kind = task_kind(parsed.task, getattr(parsed, "objective", None))
        try:
            resolve_policies(parsed.policies, kind)  # the text, or a typed configuration's items
        except InputError as exc:
            raise InputError(f"`benchmark run` rejects it: {exc.problem}", path=config.path, where="policies") from None


def last_line(text: str) -> str | None:
    """The message of the last line of a run's stderr (the CLI's one-line error), without 'error: '."""
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return re.sub(r"^error: ", "", lines[-1]) if lines else None
