"""Task 'fairness' (placeholder until implemented)."""


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    raise NotImplementedError("task 'fairness' is not implemented yet")
