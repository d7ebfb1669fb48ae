"""Entries cannot clobber each other: keyed by (track, name, dataset); escaped in every output."""

import json

import pandas as pd
import pytest

from benchmark.cli import main

# the commands' figures are placeholders: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _submit(sub, ds, entries, track="prediction"):
    return main(["submit", str(sub), "--track", track, "--data", str(ds), "--entries-dir", str(entries), "--quiet"])


def _stored(entries, track="prediction"):
    return {p.stem: json.loads(p.read_text()) for p in sorted((entries / track).glob("*.json"))}


def _preds(test, factor):
    return pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": test["p_star"].to_numpy() * factor})


def test_slug_collision_by_another_author_is_a_second_entry(dataset, submission_writer, tmp_path, capsys):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    first = submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.1), name="My HGB (newcomer)", authors=["Ann"])
    second = submission_writer(tmp_path / "b", fingerprint=fp, preds=_preds(test, 1.3), name="my HGB newcomer!!", authors=["Bo"])
    assert _submit(first, ds, entries) == 0 and _submit(second, ds, entries) == 0
    stored = _stored(entries)
    assert sorted(stored) == [f"my-hgb-newcomer-{fp[:8]}", f"my-hgb-newcomer-{fp[:8]}-2"]
    assert {e["name"]: e["authors"] for e in stored.values()} == {"My HGB (newcomer)": ["Ann"], "my HGB newcomer!!": ["Bo"]}
    assert all(e["slug"] == slug for slug, e in stored.items())
    # both are on the board
    capsys.readouterr()
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(entries)]) == 0
    board = capsys.readouterr().out
    assert "My HGB (newcomer)" in board and "my HGB newcomer!!" in board


def test_only_the_same_authors_replace_an_entry(dataset, submission_writer, tmp_path, capsys):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    mine = submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.1), name="Shared Name", authors=["Ann", "Bo"])
    assert _submit(mine, ds, entries) == 0
    before = _stored(entries)
    theirs = submission_writer(tmp_path / "b", fingerprint=fp, preds=_preds(test, 1.4), name="Shared Name", authors=["Cy"])
    capsys.readouterr()
    assert _submit(theirs, ds, entries) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "'Shared Name'" in err[0] and "only its authors can replace it" in err[0]
    assert _stored(entries) == before
    # the same authors (any order, any case) replace it, under the same slug
    again = submission_writer(tmp_path / "c", fingerprint=fp, preds=_preds(test, 1.4), name="Shared Name", authors=["bo", "Ann"])
    assert main(["submit", str(again), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries)]) == 0
    assert "replaced entry" in capsys.readouterr().out
    after = _stored(entries)
    assert list(after) == list(before) and after[list(after)[0]]["prediction"]["cov25"] == 0.0


def test_the_same_predictions_under_a_second_name_are_refused(dataset, submission_writer, tmp_path, capsys):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    assert _submit(submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.1), name="Original"), ds, entries) == 0
    # the same numbers, in another row order and another parquet encoding
    copy = submission_writer(tmp_path / "b", fingerprint=fp, preds=_preds(test, 1.1).iloc[::-1], name="Copy Cat", authors=["Z"])
    capsys.readouterr()
    assert _submit(copy, ds, entries) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "already on the prediction leaderboard as 'Original'" in err[0]
    assert list(_stored(entries)) == [f"original-{fp[:8]}"]


HOSTILE = '<img src=x onerror="alert(1)"> *bold* [link](javascript:alert(2)) | cell'


def test_names_are_escaped_in_every_output_format(dataset, submission_writer, tmp_path, capsys):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    sub = submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.1), name=HOSTILE,
                            authors=["<b>Mallory</b>"], url="https://example.org/x)<script>")
    assert _submit(sub, ds, entries) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(entries)]) == 0
    md = capsys.readouterr().out
    assert "<img" not in md and "<b>" not in md and "<script>" not in md
    assert "&lt;img src=x onerror=\"alert(1)\"&gt; \\*bold\\* \\[link\\](javascript:alert(2)) \\| cell" in md
    assert "(https://example.org/x%29%3Cscript%3E)" in md
    assert main(["leaderboard", "--track", "prediction", "--format", "html", "--entries-dir", str(entries)]) == 0
    page = capsys.readouterr().out
    assert "<img" not in page and "<b>Mallory" not in page and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page


@pytest.mark.parametrize("key, value", [("name", "evil\x1b[31mred"), ("name", "zero\u200bwidth"),
                                        ("authors", ["ok", "bell\x07"]), ("url", "https://x.org/\x00")])
def test_control_characters_are_refused(dataset, submission_writer, tmp_path, capsys, key, value):
    ds, fp, test = dataset
    sub = submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.1), **{key: value})
    assert _submit(sub, ds, tmp_path / "entries") == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"key '{key}'" in err[0] and "control characters" in err[0]
    assert not (tmp_path / "entries").exists()


def _builtin_entries(ds, entries):
    """`constant` (built-in) and `oracle` (reference) entries on the tiny dataset, as --rebuild-builtin stores them."""
    from leaderboards.pipeline import load_test, score_entry
    from leaderboards.schema import BUILTIN_AUTHORS, Submission
    from leaderboards.store import write_entry

    dataset = load_test(ds)
    test = dataset.test
    for name, factor, reference in (("constant", None, False), ("oracle", 1.0, True)):
        p_hat = test["p_star"].to_numpy() * factor if factor else [dataset.blind_p_hat] * len(test)
        preds = pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": p_hat})
        sub = Submission(name=name, authors=BUILTIN_AUTHORS, description=name, url="", track="prediction",
                         dataset_fingerprint=dataset.card["fingerprint"])
        write_entry(score_entry(sub, preds, dataset, builtin=True, reference=reference), entries)


@pytest.mark.parametrize("name, authors, expected", [
    ("constant", ["ATLAS-Bench (built-in)"], "key 'authors': author 'ATLAS-Bench (built-in)' is reserved"),
    ("oracle", ["ATLAS-Bench (built-in)"], "key 'authors': author 'ATLAS-Bench (built-in)' is reserved"),
    ("constant", ["Eve"], "'constant' is the name of the built-in entry 'constant'"),
    ("oracle", ["Eve"], "'oracle' is the name of the reference entry 'oracle'"),
    # look-alike rows: another case, punctuation or compatibility forms of a built-in's name
    ("CONSTANT", ["Eve"], "'CONSTANT' is the name of the built-in entry 'constant'"),
    ("Oracle!", ["Eve"], "'Oracle!' is the name of the reference entry 'oracle'"),
    ("ｃｏｎｓｔａｎｔ", ["Eve"], "is the name of the built-in entry 'constant'"),
], ids=["constant-builtin-author", "oracle-builtin-author", "constant", "oracle", "upper-case", "punctuation", "full-width"])
def test_a_submission_never_replaces_a_builtin_or_reference_entry(dataset, submission_writer, tmp_path, capsys,
                                                                   name, authors, expected):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    _builtin_entries(ds, entries)
    before = {p.name: p.read_bytes() for p in (entries / "prediction").iterdir()}
    sub = submission_writer(tmp_path / "a", fingerprint=fp, preds=_preds(test, 1.3), name=name, authors=authors)
    capsys.readouterr()
    assert _submit(sub, ds, entries) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and expected in err[0], err
    assert {p.name: p.read_bytes() for p in (entries / "prediction").iterdir()} == before
    # the reference row is still there, unranked
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(entries)]) == 0
    assert "| ref | oracle |" in capsys.readouterr().out


def test_the_builtin_author_string_is_reserved_in_the_store_too(dataset, tmp_path):
    """resolve_target refuses it for any entry that is not built-in, however it was made."""
    from atlas_data.errors import InputError
    from leaderboards.store import resolve_target

    ds, fp, _ = dataset
    entries = tmp_path / "entries"
    _builtin_entries(ds, entries)
    entry = {"track": "prediction", "name": "fresh name", "authors": ["atlas-bench (built-in)"], "dataset": {"fingerprint": fp},
             "provenance": {"predictions_sha256": "0" * 64}}
    with pytest.raises(InputError, match="key 'authors': author 'ATLAS-Bench \\(built-in\\)' is reserved"):
        resolve_target(entry, entries)
    # a built-in rebuild replaces its own entry; a user's own new name is stored beside them
    assert resolve_target(dict(entry, name="constant", authors=["ATLAS-Bench (built-in)"], builtin=True), entries) == (
        f"constant-{fp[:8]}", True)
    assert resolve_target(dict(entry, authors=["Eve"]), entries) == (f"fresh-name-{fp[:8]}", False)
