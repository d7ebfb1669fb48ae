"""The options of `benchmark run --task TASK` as one frozen, typed configuration per task.

`PredictionConfig`, `SchedulingConfig` and `FairnessConfig` hold what each task's `execute(config)`
reads, and nothing else; the options every task reads are declared once (`RunConfig`), those of the
two tasks that schedule jobs once more (`SimulationConfig`: policies, noise, sample). Every option is
declared once, in OPTIONS: its default, its type, the converter that checks its range
(benchmark.options), its choices and its help. The `run` parser is generated from OPTIONS
(`add_run_arguments`), and each configuration's fields take their defaults from it, so the command
line, the Python API (`benchmark.api.run`) and sweep cells build the same configuration with the
same defaults and the same checks:

- the command line parses text (`from_namespace`: the parser keeps only the options given);
- the API gives Python values (`from_options`: a list for a comma list, a dict for `--columns`,
  numbers for numbers), converted by the same converters as the command line's text;
- the text of a list, a column map or a choice is parsed once, when the configuration is made
  (`_typed`): a comma list is a tuple of its items (`policies`, `noise` σ, `machines`, `predictor`,
  `methods`, `feature_columns`, `plugins`), `columns` / `train_columns` a ColumnMap, a choice a
  member of its StrEnum (`Objective`, `FairShare`, ...; a member equals, hashes and prints as its
  text). The tasks read them as they are. The text each was given with is kept in `texts`:
  `option_text` / `as_options` give it back, what results.json and MLflow record;
- `validate(given)` checks what needs no data (each value's range, options of another task, option
  pairs that do not go together, the cluster's bounds) and raises InputError naming the option.

A configuration's fields that are not options are `frame` — the jobs table in memory that the API
was given (`jobs=DataFrame`), read in place of a file and named `<DataFrame>` — and `texts`.

May import the standard library, numpy, atlas_data, schedulers and benchmark (options, tasks.inputs,
cli for `from_argv`).
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from enum import StrEnum
from typing import ClassVar

from atlas_data.errors import InputError
from benchmark.options import job_count, number, seconds, seconds_or_zero
from benchmark.options import seed as seed_type
from schedulers.cluster.base import COLD_START_S, FAIR_WINDOW_S, INTERVAL_S, LEASE_S, RHO_FROM, cold_start_problem
from schedulers.cluster.ltgf import FAIR_SHARES
from schedulers.cluster.metrics import TENANT_LOSS_SHARES
from schedulers.cluster.scenarios import SCENARIOS
from schedulers.objectives import OBJECTIVES

#: the tasks of `benchmark run --task`
TASKS = ("fairness", "prediction", "scheduling")
#: the fairness cluster's default shape (benchmark.tasks.fairness reads them from here)
DEFAULT_NODES, DEFAULT_GPUS_PER_NODE = 8, 8
# The openb pod trace barely contends for 64 GPUs (every policy is then trivially fair), so its
# default cluster is 4 × 8 = 32 GPUs, where the policies differ; --nodes overrides it.
EMBEDDED_TRACE_SHAPE = (4, 8)
#: the largest cluster the simulator accepts (docs/fairness.md#the-cluster-model): 50x the largest real
#: node list shipped (PAI, 1,814 nodes, 6,742 GPUs) and beyond any public GPU trace; every node and
#: every GPU has simulator state, so a typo such as --nodes 100000000 would take GBs and hours
MAX_NODES, MAX_GPUS = 100_000, 10_000_000


def _enum(name: str, values) -> type[StrEnum]:
    """The choices of an option as a StrEnum, each member named as its value: a member is its text
    (equal to it, hashed as it, written as it in results.json, messages and MLflow)."""
    return StrEnum(name, [(v, v) for v in values], module=__name__, qualname=name)


Objective = _enum("Objective", OBJECTIVES)
Sample = _enum("Sample", ("window", "random"))
Protocol = _enum("Protocol", ("honest", "paper"))
Scenario = _enum("Scenario", sorted(SCENARIOS))
NodeList = _enum("NodeList", ("none", "openb", "pai"))
FairShare = _enum("FairShare", FAIR_SHARES)
TenantLossShare = _enum("TenantLossShare", TENANT_LOSS_SHARES)
RhoFrom = _enum("RhoFrom", RHO_FROM)


@dataclass(frozen=True, slots=True)
class Option:
    """One option of `benchmark run`: `--dest-with-dashes`."""

    dest: str
    default: object = None
    kind: type | None = str  # a value's Python type: str, int, float, bool or a StrEnum; None = text the converter reads
    convert: object = None  # the command line's type: text -> value, range checked (benchmark.options)
    choices: tuple | None = None
    comma_list: bool = False  # several values: the API takes a list, the command line "a,b"
    help: str = ""
    metavar: str | None = None
    group: str | None = None  # an argparse group of the --help text

    @property
    def flag(self) -> str:
        return "--" + self.dest.replace("_", "-")


def _choice(dest: str, enum: type[StrEnum], **kwargs) -> Option:
    """An option whose value is one member of `enum` (its choices are the members' text)."""
    default = kwargs.pop("default", None)
    return Option(dest, default=None if default is None else enum(default), kind=enum,
                  choices=tuple(m.value for m in enum), **kwargs)


def _options(*items: Option) -> dict[str, Option]:
    return {o.dest: o for o in items}


_F = "fairness task"
OPTIONS = _options(
    Option("jobs", metavar="FILE|TRACE",
           help="jobs table (CSV or parquet, docs/data-formats.md; a .swf / .swf.gz file is read as a Standard "
                "Workload Format log), or a trace shipped with the package: openb, philly, philly:<vc>, elasticflow "
                "(10 clusters), elasticflow:<cluster> e.g. elasticflow:cluster05 (see docs/real-traces.md)"),
    Option("feature_columns", comma_list=True, metavar="A,B,...",
           help="with --jobs FILE: more submit-time columns of the file used as prediction features (text = "
                "categorical, numbers = numeric; docs/real-traces.md lists the columns that can never be features). "
                "Shipped traces declare their own"),
    Option("columns", metavar="JOBS_COL=FILE_COL,...",
           help="with --jobs FILE: the file's name for each jobs-table column, e.g. "
                "job_id=id,submit_time=submit,duration=runtime,gpus=gpus (docs/data-formats.md)"),
    Option("train_jobs", metavar="FILE|TRACE",
           help="fit the predictors on this jobs table or shipped trace and predict the --jobs test part "
                "(cross-cluster transfer, docs/real-traces.md)"),
    Option("train_columns", metavar="JOBS_COL=FILE_COL,...",
           help="with --train-jobs FILE: that file's name for each jobs-table column, as --columns does for "
                "--jobs (docs/data-formats.md)"),
    Option("data", help="ATLAS dataset folder (from `benchmark data build`) or a named one: default, paper-scale. "
                        "With neither --jobs nor --data every task uses `default`"),
    Option("predictor", comma_list=True, help="predictor method name(s), comma-separated"),
    Option("policies", comma_list=True, help="policy names, comma-separated (default: all for the task)"),
    Option("n", kind=int, convert=job_count, help="number of jobs to sample (seeded; at most 10^9)"),
    Option("seed", default=0, kind=None, convert=seed_type, help="random seed (default 0)"),
    Option("output", help="output folder (default results/<task>-<objective>-<time>)"),
    Option("no_mlflow", default=False, kind=bool, help="do not log this run to MLflow"),
    Option("quiet", default=False, kind=bool, help="no progress and no table on stdout"),
    Option("plugins", comma_list=True, metavar="MODULES|FILES",
           help="Python modules or .py files to import first (comma-separated), e.g. ones registering policies or "
                "prediction methods (docs/plugins.md)"),
    # scheduling
    _choice("objective", Objective, help="scheduling objective (task scheduling)"),
    Option("machines", comma_list=True, help="machine counts for makespan, e.g. 5,10,20 (default 5,10,20,50,100)"),
    Option("noise", comma_list=True, help="noise levels σ for p̂ = p·exp(σZ), e.g. 0,0.5,1"),
    Option("controls", default=False, kind=bool,
           help="beside each learned p̂, run its controls: p̂ permuted among the jobs (<name>~permuted) and one "
                "constant p̂ (<name>~constant); the value-of-prediction table then says which policies use what "
                "p̂ knows (docs/evaluation-protocol.md#the-value-of-prediction)"),
    Option("prr_lambda", default=0.7, kind=float, convert=number(0.0, 1.0, "PRR's λ"), help="PRR's λ (default 0.7)"),
    _choice("sample", Sample, default="window",
           help="with --n: N consecutive jobs from a seeded start (default) or N jobs drawn at random"),
    _choice("protocol", Protocol, default="honest",
           help="honest (default) or paper: the ATLAS paper's reference protocol, leaks labelled "
                "(see docs/reproduce-atlas.md)"),
    Option("sample_seed", kind=None, convert=seed_type,
           help="seed of the job sample, apart from --seed (default: --seed; 42 with --protocol paper)"),
    Option("profile", default=False, kind=bool,
           help="print where the time went (read, normalisers, each policy, plots, tracking) and the peak memory; "
                "results.json records the same under `timings` on every run"),
    # prediction
    Option("methods", comma_list=True,
           help="prediction methods, comma-separated (prediction task; default: all but lgbm-asym, lgbm-rank, "
                "lgbm-meta-matched). A 'package.module:Class' sklearn regressor is accepted too"),
    # fairness
    _choice("scenario", Scenario, group=_F,
           help="the paper's setups (fairness): venus = synthetic Venus-like workload (100 x 8 GPUs); philly = the "
                "real Philly trace, busiest two weeks, 210 x 8 GPUs, quota ∝ requested GPUs per VC "
                "(see docs/real-traces.md)"),
    Option("nodes", kind=int, convert=int, group=_F,
           help=f"cluster nodes (fairness; default {DEFAULT_NODES}, --jobs openb {EMBEDDED_TRACE_SHAPE[0]}, venus 100, "
                "philly 210)"),
    Option("gpus_per_node", kind=int, convert=int, group=_F, help=f"GPUs per node (fairness; default {DEFAULT_GPUS_PER_NODE})"),
    _choice("node_list", NodeList, default="none", group=_F,
           help="use a real cluster's GPU nodes instead of --nodes x --gpus-per-node (fairness)"),
    Option("lease", default=LEASE_S, kind=float, convert=seconds, group=_F,
           help=f"lease length, s (fairness; default {LEASE_S:g})"),
    Option("interval", default=INTERVAL_S, kind=float, convert=seconds, group=_F,
           help=f"scheduling interval, s (fairness; default {INTERVAL_S:g})"),
    Option("cold_start", default=COLD_START_S, kind=float, convert=seconds_or_zero, group=_F,
           help=f"cold start of a resumed job incl. checkpoint restore, s (fairness; default {COLD_START_S:g}; at most "
                "half the lease)"),
    Option("tenant_weights", group=_F, help="CSV tenant,weight or JSON {tenant: weight} (fairness; default equal)"),
    _choice("fair_share", FairShare, default=FAIR_SHARES[0], group=_F,
           help="tenant fair share: eq16 = quota (paper's simulator, default) or eq8 = min(demand, quota)"),
    Option("fair_window", default=FAIR_WINDOW_S, kind=float, convert=seconds, group=_F,
           help=f"length of the tenant_loss_intervals windows, s (fairness; default {FAIR_WINDOW_S:g}; the ASTRAEA "
                "paper does not state its own)"),
    _choice("tenant_loss_share", TenantLossShare, default=TENANT_LOSS_SHARES[0], group=_F,
           help="denominator of tenant_loss_intervals: eq8 = the demand-aware share min(demand, quota) (default) or "
                "eq16 = quota x window (the paper's simulator; an ideal schedule already loses most windows) "
                "(fairness)"),
    _choice("job_rho_from", RhoFrom, default=RHO_FROM[0], group=_F,
           help="a job's ρ counts from the first scheduling tick at or after its submit (default) or from its "
                "submit time (Active while pending or running, as the paper defines it; the wait for the tick then "
                "counts as sharing loss) (fairness)"),
    Option("tenant_column", group=_F, help="tenant column of --data (default user)"),
)


def _opt(dest: str):
    """A configuration field: its default is OPTIONS[dest]'s (one place for every default)."""
    return field(default=OPTIONS[dest].default, metadata={"option": OPTIONS[dest]})


#: what `jobs` says when the jobs table is the configuration's `frame` (benchmark.api.run(jobs=DataFrame))
FRAME_LABEL = "<DataFrame>"


class ColumnMap(Mapping):
    """{jobs-table column: file column} of `--columns` / `--train-columns`: an immutable, ordered,
    hashable mapping (a frozen configuration holds it)."""

    __slots__ = ("_map",)

    def __init__(self, mapping=()):
        self._map = dict(mapping)

    def __getitem__(self, key: str) -> str:
        return self._map[key]

    def __iter__(self):
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __hash__(self) -> int:
        return hash(tuple(self._map.items()))

    def __repr__(self) -> str:
        return f"ColumnMap({self._map!r})"


def _typed(dest: str, parse, render=",".join):
    """A configuration field whose command-line text is parsed once, when the configuration is made:
    `parse(text)` gives the typed value (a tuple or a ColumnMap), `render(value)` the text the command
    line would write for a value given typed (by hand, or by `dataclasses.replace`)."""
    return field(default=OPTIONS[dest].default, metadata={"option": OPTIONS[dest], "parse": parse, "render": render})


def _items(what: str, convert=str):
    """The parser of a comma-separated option: its items (benchmark.tasks.inputs.csv_list: an empty item
    or one given twice is an InputError naming `--what`)."""
    def parse(text: str) -> tuple:
        from benchmark.tasks.inputs import csv_list

        return tuple(csv_list(text, what, convert))

    return parse


def _policy_items(text: str) -> tuple[str, ...]:
    from benchmark.tasks.inputs import policy_items

    return tuple(policy_items(text))


def _noise_levels(text: str) -> tuple[float, ...]:
    from benchmark.tasks.inputs import check_noise_levels, noise_level

    levels = _items("noise", noise_level)(text)
    check_noise_levels(levels)
    return levels


def _machine_counts(text: str) -> tuple[int, ...]:
    from benchmark.options import machine_count

    return _items("machines", machine_count)(text)


def _plugin_items(text: str) -> tuple[str, ...]:
    from atlas_data.plugins import plugin_items

    return plugin_items(text)


def _member(dest: str):
    """The parser of a choice option: its StrEnum member; any other text is an InputError naming the
    option (what check_value says of it)."""
    option = OPTIONS[dest]

    def parse(text: str):
        try:
            return option.kind(text)
        except ValueError:
            raise InputError(f"must be one of {', '.join(option.choices)}, got {text!r}", where=option.flag) from None

    return parse


def _choice_field(dest: str):
    """A configuration field holding a member of the option's StrEnum, parsed from its text once."""
    return _typed(dest, _member(dest), str)


def _column_map(option: str):
    def parse(text: str) -> ColumnMap:
        from atlas_data.jobs_table import parse_column_map

        return ColumnMap(parse_column_map(text, option))

    return parse


def _column_text(mapping) -> str:
    return ",".join(f"{k}={v}" for k, v in mapping.items())


def _number_text(value: float) -> str:
    """A number as short as it reads back exactly: 0.5, 1, 1e-07, 0.30000000000000004."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _noise_text(levels) -> str:
    return ",".join(map(_number_text, levels))


def _parse_typed(config) -> None:
    """Each typed field of `config` (`_typed`) from its text (or from a typed value, through its text:
    one parse, one set of checks, for the command line, the API and `dataclasses.replace`); the text
    is kept in `config.texts`, what results and MLflow record: as the command line (or the API's
    value) gave it, or, for a value given typed, the text it was given with (when it still reads as
    the value) or the command line's text of it."""
    given = config.texts or {}
    texts = {}
    for f in fields(config):
        parse, value = f.metadata.get("parse"), getattr(config, f.name)
        if parse is None or value is None:
            continue
        if isinstance(value, str):
            text = str(value)  # a StrEnum member's text is a plain str
        else:
            kept = given.get(f.name)
            text = kept if kept is not None and parse(kept) == _as_typed(value) else f.metadata["render"](value)
        texts[f.name] = text
        object.__setattr__(config, f.name, parse(text))
    object.__setattr__(config, "texts", texts)


def _as_typed(value):
    """A typed value as a parse gives it (a mapping stays a mapping, a list becomes a tuple)."""
    return value if isinstance(value, Mapping) else tuple(value)


def option_text(config, dest: str):
    """The value of option `dest` of `config` as the command line writes it (a typed field's text)."""
    value = getattr(config, dest)
    return config.texts.get(dest, value) if value is not None else None


def _frame():
    """The one field that is not an option: a jobs table in memory, read in place of the --jobs file
    when `jobs` is FRAME_LABEL (the API's `jobs=DataFrame`); `jobs` names it in messages and results."""
    return field(default=None, compare=False, repr=False)


def _texts():
    """The text of each typed option as it was given (`_parse_typed`): not an option, not compared."""
    return field(default=None, compare=False, repr=False)


def _option_fields(config) -> list:
    return [f for f in fields(config) if "option" in f.metadata]


# ----- the configurations ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunConfig:
    """The options every task reads, declared once: the jobs and their columns, the predictor, the seed,
    the output and the run's switches. Lists are tuples and column maps ColumnMaps, parsed once."""

    data: str | None = _opt("data")
    jobs: str | None = _opt("jobs")
    columns: ColumnMap | None = _typed("columns", _column_map("--columns"), _column_text)
    feature_columns: tuple[str, ...] | None = _typed("feature_columns", _items("feature-columns"))
    train_jobs: str | None = _opt("train_jobs")
    train_columns: ColumnMap | None = _typed("train_columns", _column_map("--train-columns"), _column_text)
    n: int | None = _opt("n")
    predictor: tuple[str, ...] | None = _typed("predictor", _items("predictor"))
    seed: int = _opt("seed")
    output: str | None = _opt("output")
    no_mlflow: bool = _opt("no_mlflow")
    quiet: bool = _opt("quiet")
    plugins: tuple[str, ...] | None = _typed("plugins", _plugin_items)
    frame: object = _frame()
    texts: dict | None = _texts()

    task: ClassVar[str]

    def __post_init__(self) -> None:
        _parse_typed(self)

    def validate(self, given=None) -> None:
        _validate(self, given)


@dataclass(frozen=True, slots=True)
class PredictionConfig(RunConfig):
    """`benchmark run --task prediction`: fit prediction methods and score them on the test split."""

    methods: tuple[str, ...] | None = _typed("methods", _items("methods"))

    task = "prediction"


@dataclass(frozen=True, slots=True)
class SimulationConfig(RunConfig):
    """The options of the tasks that schedule jobs (scheduling, fairness): the policies, the noise
    levels σ of p̂ = p·exp(σZ) and how `--n` samples the jobs."""

    policies: tuple[str, ...] | None = _typed("policies", _policy_items)
    noise: tuple[float, ...] | None = _typed("noise", _noise_levels, _noise_text)
    sample: Sample = _choice_field("sample")


@dataclass(frozen=True, slots=True)
class SchedulingConfig(SimulationConfig):
    """`benchmark run --task scheduling`: the LASched objectives on the shared simulator core."""

    objective: Objective | None = _choice_field("objective")
    machines: tuple[int, ...] | None = _typed("machines", _machine_counts, lambda counts: ",".join(map(str, counts)))
    prr_lambda: float = _opt("prr_lambda")
    controls: bool = _opt("controls")
    protocol: Protocol = _choice_field("protocol")
    sample_seed: int | None = _opt("sample_seed")
    profile: bool = _opt("profile")

    task = "scheduling"

    def validate(self, given=None) -> None:
        _validate(self, given)
        if self.objective is None:
            raise InputError("--objective is required for --task scheduling (total_completion, max_stretch or "
                             "makespan)", where="--objective")
        given = _given(self, given)
        objective = self.objective
        # options that the chosen objective or policies would not use are refused, not ignored
        if objective != "makespan" and self.machines is not None:
            raise InputError(f"--machines applies to --objective makespan only ({objective} is scheduled on one "
                             "machine)", where="--machines")
        if "prr_lambda" in given:
            if objective == "makespan":
                raise InputError("--prr-lambda sets the λ of policy prr, which is not a makespan policy",
                                 where="--prr-lambda")
            if self.policies and "prr" not in {item.split("(", 1)[0].strip() for item in self.policies}:
                raise InputError("--prr-lambda sets the λ of policy prr, which --policies does not include",
                                 where="--prr-lambda")


@dataclass(frozen=True, slots=True)
class FairnessConfig(SimulationConfig):
    """`benchmark run --task fairness`: cluster policies on a multi-tenant GPU cluster."""

    scenario: Scenario | None = _choice_field("scenario")
    nodes: int | None = _opt("nodes")
    gpus_per_node: int | None = _opt("gpus_per_node")
    node_list: NodeList = _choice_field("node_list")
    lease: float = _opt("lease")
    interval: float = _opt("interval")
    cold_start: float = _opt("cold_start")
    tenant_weights: str | None = _opt("tenant_weights")
    fair_share: FairShare = _choice_field("fair_share")
    fair_window: float = _opt("fair_window")
    tenant_loss_share: TenantLossShare = _choice_field("tenant_loss_share")
    job_rho_from: RhoFrom = _choice_field("job_rho_from")
    tenant_column: str | None = _opt("tenant_column")

    task = "fairness"

    def validate(self, given=None) -> None:
        _validate(self, given)
        check_cluster_size(self.nodes, self.gpus_per_node)  # before reading any jobs
        problem = cold_start_problem(self.cold_start, self.lease)
        if problem is not None:
            raise InputError(f"{problem}: give a --cold-start of at most half the --lease", where="--cold-start")
        sigmas = self.noise or ()
        if len(sigmas) > 1:
            raise InputError("the fairness task takes one finite noise level σ >= 0", where="--noise")
        if sigmas and self.predictor:
            raise InputError("give --noise or --predictor, not both (the fairness task takes one p̂)", where="--noise")


def check_cluster_size(nodes: int | None, gpus_per_node: int | None) -> None:
    """--nodes and --gpus-per-node (None = not given) are >= 1 and within MAX_NODES and MAX_GPUS."""
    for option, value in (("--nodes", nodes), ("--gpus-per-node", gpus_per_node)):
        if value is not None and value < 1:
            raise InputError(f"{option} must be >= 1, got {value}", where=option)
    if nodes is not None and nodes > MAX_NODES:
        raise InputError(f"{nodes:,} nodes is more than the simulator's bound of {MAX_NODES:,} "
                         "(docs/fairness.md#the-cluster-model)", where="--nodes")
    gpus = (nodes or 1) * (gpus_per_node or 1)
    if gpus > MAX_GPUS:
        option = "--gpus-per-node" if nodes is None or (gpus_per_node or 1) > MAX_GPUS // max(nodes, 1) else "--nodes"
        raise InputError(f"{gpus:,} GPUs ({nodes or 1:,} x {gpus_per_node or 1:,}) is more than the simulator's bound "
                         f"of {MAX_GPUS:,} (docs/fairness.md#the-cluster-model)", where=option)


CONFIGS = {"fairness": FairnessConfig, "prediction": PredictionConfig, "scheduling": SchedulingConfig}


def option_names(task: str) -> tuple[str, ...]:
    """The options (dests) of `--task TASK`, in the configuration's order."""
    return tuple(f.name for f in _option_fields(CONFIGS[task]))


def _given(config, given) -> frozenset:
    """The options given: `given` when the caller knows them, else those that differ from their defaults."""
    if given is not None:
        return frozenset(given)
    return frozenset(f.name for f in _option_fields(config) if getattr(config, f.name) != f.default)


def _validate(config, given) -> None:
    """What every task checks before any work: each value as the command line would parse it (a typed
    field was parsed, and its items checked, when the configuration was made), and that the column
    maps of --columns / --train-columns have their file."""
    for f in _option_fields(config):
        value = option_text(config, f.name)
        if value is not None and value != f.default:
            try:
                check_value(OPTIONS[f.name], value, config.task)
            except (TypeError, ValueError) as exc:  # a configuration built by hand, not by from_options
                problem = str(exc).removeprefix(f"{config.task}(): {f.name}").lstrip(": ")
                raise InputError(problem, where=OPTIONS[f.name].flag) from None
    if config.frame is not None and config.jobs != FRAME_LABEL:
        raise InputError(f"a jobs table in memory goes with jobs={FRAME_LABEL!r}", where="--jobs")
    if config.columns is not None and not config.jobs:
        raise InputError("--columns maps the columns of a --jobs FILE", where="--columns")
    if config.train_columns is not None and not config.train_jobs:
        raise InputError("--train-columns maps the columns of a --train-jobs FILE", where="--train-columns")


# ----- building one ------------------------------------------------------------------------------
def make(task: str, options: dict, *, given=None):
    """The validated configuration of `--task TASK` from typed `options` (dest -> value).

    An option of another task is an InputError naming it (and the tasks that read it): refused, not
    silently ignored. `given` (default: the keys of `options`) are the options the user gave."""
    if task not in CONFIGS:
        raise InputError(f"unknown task {task!r} (choose from {', '.join(TASKS)})", where="--task")
    names = set(option_names(task))
    for dest in sorted(options):
        if dest in names:
            continue
        users = [t for t in TASKS if dest in option_names(t)]
        option = OPTIONS[dest].flag if dest in OPTIONS else dest
        raise InputError(f"{option} is not an option of --task {task}"
                         + (f" (it is read by --task {', '.join(users)})" if users else ""), where=option)
    config = CONFIGS[task](**options)
    config.validate(frozenset(options) if given is None else given)
    return config


def from_namespace(args: argparse.Namespace):
    """The configuration of a parsed `benchmark run` command line (the parser keeps only the options given)."""
    options = {k: v for k, v in vars(args).items() if k in OPTIONS}
    return make(args.task, options)


def from_argv(argv) -> object:
    """The configuration of a `benchmark run ...` argv (its first item is `run`); argparse errors exit 2."""
    from benchmark.cli import build_parser

    return from_namespace(build_parser(["run"]).parse_args([str(a) for a in argv]))


def from_options(task: str, options: dict, *, function: str = "run", defaults: dict | None = None):
    """The configuration of `--task TASK` from Python keyword values (`benchmark.api.run`).

    An unknown name is an InputError naming it and its close matches; a value is converted as the
    command line converts its text (a list for a comma list, a dict for a column map); None is
    "not given". `defaults` are used for options not given (the API's quiet, no_mlflow)."""
    typed = {}
    for key, value in options.items():
        if key not in OPTIONS:
            close = difflib.get_close_matches(key, list(OPTIONS), n=3)
            raise InputError(f"{function}() has no option {key!r}"
                             + (f" (did you mean {', '.join(close)}?)" if close else
                                f" (the options of --task {task}: {', '.join(option_names(task)) if task in CONFIGS else '-'})"),
                             where=key)
        if value is None:
            continue
        typed[key] = check_value(OPTIONS[key], value, function)
    given = frozenset(typed)
    for key, value in (defaults or {}).items():
        typed.setdefault(key, value)
    return make(task, typed, given=given)


def check_value(option: Option, value, function: str):
    """`value` of `option` given as a Python value, checked and converted as the command line converts its
    text: TypeError for a value of the wrong kind, ValueError for one out of range or not a choice."""
    import numpy as np

    key = option.dest
    if option.comma_list and isinstance(value, (list, tuple)):
        if not value or not all(isinstance(v, (str, int, float, np.integer, np.floating)) and not isinstance(v, bool)
                                for v in value):
            raise TypeError(f"{function}(): {key} must be a list of names or numbers, got {value!r}")
        value = ",".join(str(v) for v in value)
    elif option.comma_list and isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        value = str(value)  # one machine count, one σ
    if key in ("columns", "train_columns") and isinstance(value, Mapping):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    if option.kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{function}(): {key} must be True or False, got {value!r}")
        return bool(value)
    if option.choices is not None:
        if value not in option.choices:
            raise ValueError(f"{function}(): {key} must be one of {', '.join(map(str, option.choices))}, got {value!r}")
        return value
    real = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if option.kind is int:
        if not (real and float(value).is_integer()):
            raise TypeError(f"{function}(): {key} must be a whole number, got {value!r}")
        value = int(value)
    elif option.kind is float:
        if not real:
            raise TypeError(f"{function}(): {key} must be a number, got {value!r}")
        value = float(value)
    elif option.kind is str:
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{function}(): {key} must be text (as {option.flag} takes it), got {type(value).__name__}")
        return str(value)
    if option.convert is not None:
        try:
            return option.convert(repr(value) if option.kind is not None else str(value))
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise ValueError(f"{function}(): {key}: {exc}") from None
    return value


# ----- the parser --------------------------------------------------------------------------------
def add_run_arguments(parser) -> None:
    """Every option of OPTIONS on the `run` parser, without defaults: the namespace holds only the
    options given, and each configuration supplies its own defaults (one place for them)."""
    groups = {}
    for option in OPTIONS.values():
        target = parser
        if option.group:
            target = groups.get(option.group) or groups.setdefault(option.group, parser.add_argument_group(option.group))
        kwargs = {"dest": option.dest, "default": argparse.SUPPRESS, "help": option.help}
        if option.kind is bool:
            target.add_argument(option.flag, action="store_true", **kwargs)
            continue
        if option.convert is not None:
            kwargs["type"] = option.convert
        if option.choices is not None:
            kwargs["choices"] = option.choices
        if option.metavar:
            kwargs["metavar"] = option.metavar
        target.add_argument(option.flag, **kwargs)


def defaults(task: str) -> dict:
    """{option: default} of `--task TASK`."""
    return {f.name: (f.default if f.default is not MISSING else None) for f in _option_fields(CONFIGS[task])}


def as_options(config) -> dict:
    """The configuration as {option: value}, what MLflow logs as the run's parameters (a typed field
    as the command line writes it)."""
    return {f.name: option_text(config, f.name) for f in _option_fields(config)}
