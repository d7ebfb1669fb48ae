"""User YAML files: a key given twice is an error naming both lines, never the last value winning."""

import pytest

from atlas_data.errors import InputError
from atlas_data.yamlio import load_yaml


def test_a_plain_document_reads_as_safe_load_reads_it():
    assert load_yaml("a: 1\nb: [1, 2]\nc: {x: 1, y: [a, b]}\n", "f.yaml") == {"a": 1, "b": [1, 2], "c": {"x": 1, "y": ["a", "b"]}}


@pytest.mark.parametrize("text, message", [
    ("name: first\nauthors: [x]\nname: second\n", "f.yaml: line 3, column 1: not valid YAML: key 'name' is given twice (first on line 1)"),
    ("grid:\n  n: [200]\n  n: [300]\n", "f.yaml: line 3, column 3: not valid YAML: key 'n' is given twice (first on line 2)"),
    ("a: [1\n", "f.yaml: line 2, column 1: not valid YAML: expected ',' or ']', but got '<stream end>'"),
])
def test_repeated_keys_and_bad_yaml_are_input_errors(text, message):
    with pytest.raises(InputError) as info:
        load_yaml(text, "f.yaml")
    assert str(info.value) == message


def test_python_objects_are_refused_as_by_safe_load():
    with pytest.raises(InputError, match="not valid YAML"):
        load_yaml("a: !!python/object/apply:os.system ['true']\n", "f.yaml")
