"""`benchmark submit`: every kind of invalid submission is refused with exit 2, one stderr line
naming the file and the problem, and no entry written; a valid one is stored."""

import hashlib
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmark.cli import main


def _submit(sub, ds, entries, track="prediction"):
    argv = ["submit", str(sub), "--data", str(ds), "--entries-dir", str(entries), "--quiet"]
    if track is not None:
        argv += ["--track", track]
    try:
        return main(argv)
    except SystemExit as exc:  # argparse errors
        return exc.code


def _files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# Each case: (id, how to break the folder, --track, substrings the one error line must contain).
def _drop_yaml(sub, **_):
    (sub / "submission.yaml").unlink()


def _drop_parquet(sub, **_):
    (sub / "predictions.parquet").unlink()


def _yaml_text(text):
    def apply(sub, **_):
        (sub / "submission.yaml").write_text(text)
    return apply


def _meta(**overrides):
    def apply(sub, fingerprint, preds, write, **_):
        write(sub, fingerprint=fingerprint, preds=preds, **overrides)
    return apply


def _preds(change):
    def apply(sub, fingerprint, preds, test, frame, write, **_):
        write(sub, fingerprint=fingerprint, preds=change(preds.copy(), test, frame))
    return apply


def _arrow(table_fn):
    def apply(sub, preds, **_):
        pq.write_table(table_fn(preds), sub / "predictions.parquet")
    return apply


def _set(column, row, value):
    def change(p, test, frame):
        p[column] = p[column].astype(float)
        p.loc[row, column] = value
        return p
    return change


def _replace_with_folder(name):
    def apply(sub, **_):
        (sub / name).unlink()
        (sub / name).mkdir()
        (sub / name / "part-0.parquet").write_bytes(b"")
    return apply


CASES = [
    ("no-yaml", _drop_yaml, "prediction", ["submission.yaml", "missing file"]),
    ("no-parquet", _drop_parquet, "prediction", ["predictions.parquet", "missing file"]),
    ("bad-yaml", _yaml_text("name: [unclosed\nauthors: x\n"), "prediction", ["submission.yaml", "not valid YAML", "line"]),
    ("empty-yaml", _yaml_text(""), "prediction", ["submission.yaml", "must be a mapping", "empty"]),
    ("yaml-list", _yaml_text("- a\n- b\n"), "prediction", ["submission.yaml", "must be a mapping"]),
    ("missing-key", _meta(url=...), "prediction", ["submission.yaml", "missing key(s) url"]),
    ("unknown-key", _meta(homepage="x"), "prediction", ["submission.yaml", "unknown key(s) homepage"]),
    ("authors-type", _meta(authors=5), "prediction", ["key 'authors'", "non-empty string or a list"]),
    ("name-type", _meta(name=12), "prediction", ["key 'name'", "must be a string, got int"]),
    ("name-empty", _meta(name="  "), "prediction", ["key 'name'", "non-empty"]),
    ("bad-url", _meta(url="ftp://x"), "prediction", ["key 'url'", "http(s) URL"]),
    ("unknown-track", _meta(track="speed"), "prediction", ["key 'track'", "unknown track 'speed'"]),
    ("track-mismatch", _meta(track="prediction"), "scheduling", ["key 'track'", "track is 'prediction' but --track is 'scheduling'"]),
    ("fingerprint-malformed", _meta(dataset_fingerprint="abc123"), "prediction", ["key 'dataset_fingerprint'", "64-hex-digit"]),
    ("fingerprint-mismatch", _meta(dataset_fingerprint="0" * 64), "prediction",
     ["key 'dataset_fingerprint'", "does not match the dataset's fingerprint"]),
    ("missing-ids", _preds(lambda p, t, f: p.iloc[5:]), "prediction",
     ["predictions.parquet", "column 'job_id'", "5 of 40 test job_id(s) missing", "'j0080'"]),
    ("unknown-id", _preds(lambda p, t, f: pd.concat([p, pd.DataFrame({"job_id": ["nope"], "p_hat": [3.0]})], ignore_index=True)),
     "prediction", ["predictions.parquet", "row 41", "1 job_id(s) not in the dataset's test split", "'nope'"]),
    ("train-id", _preds(lambda p, t, f: p.assign(job_id=["j0000"] + list(p["job_id"].iloc[1:]))), "prediction",
     ["row 1", "not in the dataset's test split", "'j0000'"]),
    ("duplicate-id", _preds(lambda p, t, f: pd.concat([p, p.iloc[[3]]], ignore_index=True)), "prediction",
     ["predictions.parquet", "row 4", "duplicate job_id 'j0083'", "row 41"]),
    ("null-id", _arrow(lambda p: pa.table({"job_id": pa.array([None] + list(p["job_id"].iloc[1:]), pa.string()),
                                           "p_hat": p["p_hat"].to_numpy()})), "prediction", ["row 1", "job_id is empty"]),
    ("nan-p_hat", _preds(_set("p_hat", 7, np.nan)), "prediction", ["row 8", "p_hat is not finite (nan)", "'j0087'"]),
    ("inf-p_hat", _preds(_set("p_hat", 2, np.inf)), "prediction", ["row 3", "p_hat is not finite (inf)"]),
    ("zero-p_hat", _preds(_set("p_hat", 0, 0.0)), "prediction", ["row 1", "p_hat must be > 0, got 0", "'j0080'"]),
    ("negative-p_hat", _preds(_set("p_hat", 39, -5.0)), "prediction", ["row 40", "p_hat must be > 0, got -5"]),
    ("lo-above-hi", _preds(lambda p, t, f: p.assign(lo=p["p_hat"] * 0.5, hi=np.r_[p["p_hat"].iloc[:10] * 2, [1.0] * 30])),
     "prediction", ["row 11", "lo > hi"]),
    ("lo-without-hi", _preds(lambda p, t, f: p.assign(lo=p["p_hat"] * 0.5)), "prediction", ["column 'lo'", "both interval columns"]),
    ("negative-lo", _preds(lambda p, t, f: p.assign(lo=-1.0, hi=p["p_hat"] * 2)), "prediction", ["row 1", "lo must be >= 0"]),
    ("p_hat-strings", _preds(lambda p, t, f: p.assign(p_hat=p["p_hat"].astype(str))), "prediction",
     ["column 'p_hat'", "must be a number"]),
    ("p_hat-bool", _preds(lambda p, t, f: p.assign(p_hat=True)), "prediction", ["column 'p_hat'", "has type bool"]),
    ("job_id-float", _arrow(lambda p: pa.table({"job_id": pa.array(np.arange(40, dtype=float)), "p_hat": p["p_hat"].to_numpy()})),
     "prediction", ["column 'job_id'", "must be string or integer"]),
    ("extra-column", _preds(lambda p, t, f: p.assign(confidence=1.0)), "prediction", ["unknown column(s) confidence"]),
    ("no-p_hat", _preds(lambda p, t, f: p.rename(columns={"p_hat": "prediction"})), "prediction", ["missing column(s) p_hat"]),
    ("empty-parquet", _preds(lambda p, t, f: p.iloc[:0]), "prediction", ["predictions.parquet", "has no rows"]),
    ("not-parquet", lambda sub, **_: (sub / "predictions.parquet").write_bytes(b"job_id,p_hat\nj1,3\n"), "prediction",
     ["predictions.parquet", "not a readable parquet file"]),
    # an empty job_id is named as such (rule 9), not as an id missing from the test split
    ("empty-string-id", _preds(lambda p, t, f: p.assign(job_id=list(p["job_id"].iloc[:2]) + [""] + list(p["job_id"].iloc[3:]))),
     "prediction", ["predictions.parquet", "row 3", "job_id is empty"]),
    ("blank-id", _preds(lambda p, t, f: p.assign(job_id=["  "] + list(p["job_id"].iloc[1:]))), "prediction",
     ["row 1", "job_id is empty"]),
    ("parquet-is-a-folder", _replace_with_folder("predictions.parquet"), "prediction",
     ["predictions.parquet", "is a folder, not a file"]),
    ("yaml-is-a-folder", _replace_with_folder("submission.yaml"), "prediction", ["submission.yaml", "is a folder, not a file"]),
    # a key given twice is not "the last one wins": it names both lines
    ("duplicate-yaml-key", _yaml_text("name: One\nauthors: [A]\ndescription: ''\nurl: ''\ntrack: prediction\n"
                                      "dataset_fingerprint: x\nname: Two\n"), "prediction",
     ["submission.yaml", "line 7", "key 'name' is given twice (first on line 1)"]),
    ("unnamed-pandas-index", lambda sub, preds, **_: preds.set_axis([f"r{i}" for i in range(len(preds))])
     .to_parquet(sub / "predictions.parquet"), "prediction", ["unknown column(s) __index_level_0__", "index=False"]),
    # the built-in methods' author string is theirs alone
    ("reserved-author", _meta(authors=["A. Tester", "atlas-bench  (BUILT-IN)"]), "prediction",
     ["submission.yaml", "key 'authors'", "'ATLAS-Bench (built-in)' is reserved"]),
    ("name-without-letters", _meta(name="— · —"), "prediction", ["key 'name'", "must contain a letter or a digit"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_invalid_submission_is_refused(case, dataset, good_preds, submission_writer, tmp_path, capsys):
    _, breaker, track, expected = case
    ds, fingerprint, test = dataset
    frame = pd.read_parquet(ds / "atlas.parquet")
    sub = submission_writer(tmp_path / "sub", fingerprint=fingerprint, preds=good_preds, track=track)
    breaker(sub=sub, fingerprint=fingerprint, preds=good_preds, test=test, frame=frame, write=submission_writer)
    entries = tmp_path / "entries"
    capsys.readouterr()
    assert _submit(sub, ds, entries, track) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    for text in expected:
        assert text in lines[0], lines[0]
    assert captured.out == ""
    assert _files(entries) == []


def test_cli_usage_errors_are_one_line(dataset, good_preds, submission_writer, tmp_path, capsys):
    ds, fingerprint, _ = dataset
    sub = submission_writer(tmp_path / "sub", fingerprint=fingerprint, preds=good_preds)
    entries = tmp_path / "entries"
    for argv_track, text in ((None, "--track is required"), ("speed", "invalid choice: 'speed'")):
        capsys.readouterr()
        assert _submit(sub, ds, entries, argv_track) == 2
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1 and text in lines[0]
    capsys.readouterr()
    assert _submit(tmp_path / "nowhere", ds, entries) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "submission folder does not exist" in lines[0] and "nowhere" in lines[0]
    assert _files(entries) == []


def test_integer_job_ids_are_accepted_as_strings(tmp_path, capsys):
    """A dataset with integer-like ids: a submission may write them as integers."""
    from leaderboards.validate import check_predictions

    out = check_predictions(pd.DataFrame({"job_id": [3, 1, 2], "p_hat": [1, 2.5, 3]}), ["1", "2", "3"], "x.parquet")
    assert out["job_id"].tolist() == ["3", "1", "2"]
    assert out["p_hat"].tolist() == [1.0, 2.5, 3.0]


def test_valid_submission_is_stored_with_provenance(dataset, good_preds, submission_writer, tmp_path, capsys):
    ds, fingerprint, test = dataset
    sub = submission_writer(tmp_path / "sub", fingerprint=fingerprint, preds=good_preds)
    entries = tmp_path / "entries"
    assert main(["submit", str(sub), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries)]) == 0
    out = capsys.readouterr().out
    assert "Tiny Test Method (prediction): cov25 100.0%" in out
    files = _files(entries)
    assert [p.relative_to(entries).as_posix() for p in files] == [f"prediction/tiny-test-method-{fingerprint[:8]}.json"]
    entry = json.loads(files[0].read_text())
    assert entry["name"] == "Tiny Test Method" and entry["authors"] == ["A. Tester", "B. Tester"]
    assert entry["track"] == "prediction" and entry["scheduling"] is None and entry["builtin"] is False
    assert entry["dataset"] == {"fingerprint": fingerprint, "source": "hand-made test dataset", "n_test": 40, "default": False}
    # p̂ = 1.1 p: every job within 25 %, log error log1p(1.1p) − log1p(p) per job
    assert entry["prediction"]["cov25"] == 1.0 and entry["score"] == 1.0
    p = test["p_star"].to_numpy()
    assert entry["prediction"]["rmsle"] == pytest.approx(np.sqrt(np.mean((np.log1p(1.1 * p) - np.log1p(p)) ** 2)))
    prov = entry["provenance"]
    assert prov["predictions_file_sha256"] == hashlib.sha256((sub / "predictions.parquet").read_bytes()).hexdigest()
    assert len(prov["predictions_sha256"]) == 64 and prov["seed"] == 0
    assert prov["package_version"] and prov["created"].endswith("Z") and len(prov["created"]) == 20
    # resubmitting under the same name on the same dataset replaces the entry
    assert main(["submit", str(sub), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries)]) == 0
    assert "replaced entry" in capsys.readouterr().out
    assert len(_files(entries)) == 1


def test_job_id_written_as_the_pandas_index_is_a_column(dataset, good_preds, submission_writer, tmp_path):
    """`df.set_index("job_id").to_parquet(...)` stores job_id as a column: it is read as one."""
    from leaderboards.validate import validate_submission

    ds, fingerprint, test = dataset
    sub = submission_writer(tmp_path / "sub", fingerprint=fingerprint, preds=good_preds)
    good_preds.set_index("job_id").to_parquet(sub / "predictions.parquet")
    _, preds = validate_submission(sub, {"fingerprint": fingerprint}, test["job_id"], track="prediction")
    assert preds["job_id"].tolist() == good_preds["job_id"].tolist()
    assert preds["p_hat"].tolist() == good_preds["p_hat"].tolist()


@pytest.mark.parametrize("name", ["日本語モデル", "Модель", "ψ-net", "ٱلنموذج"], ids=["japanese", "cyrillic", "greek", "arabic"])
def test_names_in_any_script_are_accepted(dataset, good_preds, submission_writer, tmp_path, name):
    from leaderboards.validate import validate_submission

    ds, fingerprint, test = dataset
    sub = submission_writer(tmp_path / "sub", fingerprint=fingerprint, preds=good_preds, name=name)
    submission, _ = validate_submission(sub, {"fingerprint": fingerprint}, test["job_id"], track="prediction")
    assert submission.name == name
