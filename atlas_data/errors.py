"""The one exception type for bad user input, shared by every package.

Raised anywhere input is wrong (a file, a row, a column, an option); the CLI turns it into one
line on stderr and exit status 2. May import nothing from the project.
"""


class InputError(Exception):
    """Bad input the user can fix. The message is one line naming file, row/column and problem."""

    def __init__(self, message: str, *, path: str | None = None, where: str | None = None):
        parts = [p for p in (path, where) if p]
        self.path = path
        self.where = where
        self.problem = message
        super().__init__(": ".join(parts + [message]) if parts else message)
