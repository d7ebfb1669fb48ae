"""Placeholder until implemented."""


def register(data_subparsers) -> None:
    pass
