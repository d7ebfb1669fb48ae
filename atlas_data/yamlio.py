"""YAML files a user writes (sweep configs, leaderboard submissions): read safely, and a key given
twice is an error, not the last one silently winning. Merge keys (`<<: *defaults`) work as in
yaml.safe_load: the keys written beside `<<` override the merged ones.

Bounded before the work (docs/data-formats.md#limits): the file must be a regular file of at most
MAX_YAML_BYTES (`load_yaml_file`; a device such as /dev/zero or a FIFO would be read forever), and
the document, with every alias replaced by what it names, at most MAX_YAML_NODES values and
MAX_YAML_DEPTH levels: a "billion laughs" file (nine aliases to nine aliases to ...) is a few
hundred bytes that expand to 10^9 values. The count is kept while the document is composed, so
such a file is refused after reading MAX_YAML_NODES values, before any object is built.

May import nothing from the project but atlas_data.errors and atlas_data.io.
"""

from __future__ import annotations

import yaml

from atlas_data.errors import InputError


#: the largest YAML file read, in bytes: a sweep config or a submission is a few kB; 1 MB holds a
#: list of 10^5 values with room to spare
MAX_YAML_BYTES = 1_000_000
#: the most values (scalars, lists, mappings) a document may hold once its aliases are expanded: ten
#: times the default max_cells of a sweep, far below what would take seconds to build or print
MAX_YAML_NODES = 100_000
#: the deepest nesting of lists and mappings: configs need three levels; PyYAML recurses per level
MAX_YAML_DEPTH = 100


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a mapping with a repeated key, and a document beyond
    MAX_YAML_NODES values (aliases expanded) or MAX_YAML_DEPTH levels."""

    def __init__(self, stream):
        super().__init__(stream)
        self._values = 0  # values composed so far, each alias counted as the values it names
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> its values, aliases expanded (kept alive by the tree)
        self._heights: dict[int, int] = {}  # id(node) -> its levels, aliases expanded

    def _count(self, n: int, mark) -> None:
        self._values += n
        if self._values > MAX_YAML_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_YAML_NODES:,} values once aliases are expanded (an alias bomb?); "
                "the limits are in docs/data-formats.md#limits", mark)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:  # an undefined alias: PyYAML's own error follows
                size = self._sizes.get(id(node))
                if size is None:
                    raise yaml.composer.ComposerError(
                        None, None, f"alias *{event.anchor} refers to the node it is in (a recursive structure)",
                        event.start_mark)
                self._count(size, event.start_mark)
                self._nest(self._depth + self._heights[id(node)], event.start_mark)
            return super().compose_node(parent, index)
        mark = self.peek_event().start_mark
        self._depth += 1
        self._nest(self._depth, mark)
        before = self._values
        self._count(1, mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._sizes[id(node)] = self._values - before
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else [])
        self._heights[id(node)] = 1 + max((self._heights[id(c)] for c in children), default=0)
        return node

    def _nest(self, depth: int, mark) -> None:
        if depth > MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels once aliases are expanded "
                "(docs/data-formats.md#limits)", mark)


_MERGE = object()  # stands for YAML's merge key `<<` in the repeated-key check (`'<<'` quoted is a plain key)


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False):
    """A mapping as yaml.safe_load builds it, merge keys (`<<: *anchor`, `<<: [*a, *b]`) included: the
    merged mappings' keys come in and the keys written beside `<<` win, as YAML defines them; a key
    written twice in the same mapping (`<<` too) is an error naming both lines."""
    seen: dict = {}
    for key_node, _ in node.value:
        merge = key_node.tag == "tag:yaml.org,2002:merge"
        key = _MERGE if merge else loader.construct_object(key_node, deep=deep)
        try:
            first = seen.setdefault(key, key_node)
        except TypeError:  # an unhashable key: PyYAML's own error follows
            continue
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {'<<' if key is _MERGE else key!r} is given twice (first on line {first.start_mark.line + 1})", key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml_file(path, what: str):
    """The YAML document of the file `path` (a `what`, e.g. "sweep config"): a regular UTF-8 file of at
    most MAX_YAML_BYTES, checked before it is read; every problem is an InputError naming the file."""
    from atlas_data.io import read_input_text

    return load_yaml(read_input_text(path, what, max_bytes=MAX_YAML_BYTES), str(path))


def load_yaml(text: str, path: str):
    """The YAML document in `text` (read from `path`); invalid YAML, a repeated key, or a document
    beyond the limits above is an InputError naming the line (and column)."""
    if len(text) > MAX_YAML_BYTES:
        raise InputError(f"more than {MAX_YAML_BYTES:,} characters (the limit of a YAML file, "
                         "docs/data-formats.md#limits)", path=path)
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = " ".join(str(getattr(exc, "problem", None) or "not valid YAML").split())
        raise InputError(f"not valid YAML: {problem}", path=path, where=where) from None
