"""Task 'scheduling' (placeholder until implemented)."""


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    raise NotImplementedError("task 'scheduling' is not implemented yet")
