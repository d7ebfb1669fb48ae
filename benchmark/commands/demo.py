"""`benchmark demo`: the main job on the embedded default data (what `make demo` runs)."""


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the main job on the embedded default data")
    parser.add_argument("--output", default="results/demo", help="output folder (default results/demo)")
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(handler=_demo)


def _demo(args) -> int:
    raise NotImplementedError("demo not implemented yet")
