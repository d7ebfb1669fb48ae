"""User YAML files: a key given twice is an error naming both lines, never the last value winning."""

import pytest
import yaml

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


def test_merge_keys_read_as_safe_load_reads_them():
    # YAML's merge key: the merged mappings' keys come in, the keys written beside `<<` win
    text = ("defaults: &d {scenario: venus, lease: 600}\nbig: &b {nodes: 140}\n"
            "cell:\n  <<: *d\n  lease: 900\nboth:\n  <<: [*d, *b]\n  quoted: {'<<': 1}\n")
    assert load_yaml(text, "f.yaml") == {
        "defaults": {"scenario": "venus", "lease": 600}, "big": {"nodes": 140},
        "cell": {"scenario": "venus", "lease": 900},
        "both": {"scenario": "venus", "lease": 600, "nodes": 140, "quoted": {"<<": 1}}}
    assert load_yaml(text, "f.yaml") == yaml.safe_load(text)


@pytest.mark.parametrize("text, message", [
    ("a: &a {x: 1}\nb:\n  <<: *a\n  <<: *a\n", "line 4, column 3: not valid YAML: key '<<' is given twice (first on line 3)"),
    ("a: &a {x: 1}\nb:\n  <<: *a\n  y: 1\n  y: 2\n", "line 5, column 3: not valid YAML: key 'y' is given twice (first on line 4)"),
    ("b:\n  <<: 5\n", "line 2, column 7: not valid YAML: expected a mapping or list of mappings for merging, but found scalar"),
])
def test_a_bad_merge_is_one_clear_line(text, message):
    with pytest.raises(InputError) as info:
        load_yaml(text, "f.yaml")
    assert str(info.value) == f"f.yaml: {message}"


def test_a_sweep_config_may_merge_its_options(tmp_path):
    from benchmark.sweeps.config import load_config

    path = tmp_path / "sweep.yaml"
    path.write_text("task: fairness\npolicies: [astraea]\noptions:\n  <<: {scenario: venus, cold-start: 60}\n"
                    "  cold-start: 30\nlease: [300, 600]\nmlflow: false\n")
    config = load_config(path)
    assert dict(config.options) == {"scenario": "venus", "cold-start": 30}
