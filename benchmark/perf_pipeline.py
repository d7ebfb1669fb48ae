"""Perf section (placeholder until implemented)."""


def add_arguments(parser) -> None:
    pass


def run(args) -> dict:
    raise NotImplementedError("this perf section is not implemented yet")
