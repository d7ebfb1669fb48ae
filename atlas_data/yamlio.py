"""YAML files a user writes (sweep configs, leaderboard submissions): read safely, and a key given
twice is an error, not the last one silently winning. May import nothing from the project but
atlas_data.errors.
"""

from __future__ import annotations

import yaml

from atlas_data.errors import InputError


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a mapping with a repeated key."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.setdefault(key, key_node)
        except TypeError:  # an unhashable key: PyYAML's own error follows
            continue
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice (first on line {first.start_mark.line + 1})", key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str, path: str):
    """The YAML document in `text` (read from `path`); invalid YAML or a repeated key is an
    InputError naming the line (and column)."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = " ".join(str(getattr(exc, "problem", None) or "not valid YAML").split())
        raise InputError(f"not valid YAML: {problem}", path=path, where=where) from None
