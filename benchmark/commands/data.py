"""`benchmark data ...`: dataset build / synth / describe (ATLAS pipeline) and import (jobs tables)."""

from __future__ import annotations

import importlib

DATA_MODULES = ("benchmark.commands.data_build", "benchmark.commands.data_import")


def register(subparsers) -> None:
    parser = subparsers.add_parser("data", help="build, synthesise, describe or import datasets")
    data_sub = parser.add_subparsers(dest="data_command", metavar="SUBCOMMAND", parser_class=type(parser))
    data_sub.required = True
    for name in DATA_MODULES:
        importlib.import_module(name).register(data_sub)
