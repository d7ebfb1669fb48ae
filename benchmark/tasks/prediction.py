"""Task 'prediction' (placeholder until implemented)."""


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    raise NotImplementedError("task 'prediction' is not implemented yet")
