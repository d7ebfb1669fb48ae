"""The one exception type for bad user input, shared by every package, and the rule that keeps its
message one short line.

Raised anywhere input is wrong (a file, a row, a column, an option); the CLI turns it into one
line on stderr and exit status 2. A message often quotes what the user gave (a value, a name, a
line of a file), which may be megabytes long or hold line breaks: `one_line` shortens every part
of the message to MAX_PART characters and makes it one line, once, here, so no error line can be
longer than a few thousand characters (docs/data-formats.md#limits). May import nothing from the project.
"""

#: the longest part (path, place, problem) of an error line, in characters: room for a sentence that
#: names two long paths (a fix such as `mv PATH PATH.damaged` must survive whole); what is cut is
#: replaced by "…" (its head and tail are kept). Quoted values are shortened far more (`shown`).
MAX_PART = 1000


def one_line(text: object, limit: int = MAX_PART) -> str:
    """`text` on one line (line breaks and other vertical whitespace become spaces) and at most `limit`
    characters: a longer text keeps its head and its last fifth around "…"."""
    text = str(text)
    if len(text) > 4 * limit:  # a megabyte-long value: cut before splitting it into lines
        text = text[: 2 * limit] + text[-limit:]
    text = " ".join(text.splitlines())
    if len(text) <= limit:
        return text
    tail = limit // 5
    return text[: limit - tail - 1] + "…" + text[-tail:]


def shown(value: object, limit: int = 80) -> str:
    """repr(value) shortened to `limit` characters, without building the repr of a huge container
    (a YAML list of millions of items): for quoting a user's value in a message."""
    import reprlib

    short = reprlib.Repr()
    short.maxstring = short.maxother = limit
    short.maxlist = short.maxtuple = short.maxdict = short.maxset = 8
    short.maxlevel = 3
    text = short.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class InputError(Exception):
    """Bad input the user can fix. The message is one line naming file, row/column and problem;
    each part is shortened by `one_line`."""

    def __init__(self, message: str, *, path: str | None = None, where: str | None = None):
        self.path = path  # as given: callers compare it with the file they read
        self.where = where
        self.problem = one_line(message)
        parts = [one_line(p) for p in (path, where) if p]
        super().__init__(": ".join(parts + [self.problem]) if parts else self.problem)
