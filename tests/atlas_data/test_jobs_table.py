"""read_jobs / validate_jobs / require_predictions: normalisation and one exact message per error kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from atlas_data.errors import InputError
from atlas_data.jobs_table import read_jobs, require_predictions, validate_jobs


def write(tmp_path, text: str, name: str = "jobs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(path, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        read_jobs(path, **kwargs)
    return info.value


def test_defaults_dtypes_and_column_order(tmp_path):
    path = write(tmp_path, "job_id,submit_time,duration,extra\n007,0,5,x\nb,1.5,2.25,y\n")
    jobs = read_jobs(path)
    assert list(jobs.columns) == ["job_id", "submit_time", "duration", "gpus", "tenant", "weight"]
    assert jobs["job_id"].tolist() == ["007", "b"]  # ids keep their text form
    assert jobs["submit_time"].tolist() == [0.0, 1.5]
    assert jobs["duration"].tolist() == [5.0, 2.25]
    assert jobs["gpus"].tolist() == [1, 1]
    assert jobs["tenant"].tolist() == ["default", "default"]
    assert jobs["weight"].tolist() == [1.0, 1.0]
    assert jobs["submit_time"].dtype == np.float64 and jobs["duration"].dtype == np.float64
    assert jobs["gpus"].dtype == np.int64 and jobs["weight"].dtype == np.float64
    assert pd.api.types.is_string_dtype(jobs["job_id"]) and pd.api.types.is_string_dtype(jobs["tenant"])


def test_all_columns_and_prediction(tmp_path):
    path = write(
        tmp_path,
        "job_id,submit_time,duration,gpus,tenant,weight,predicted_duration\n"
        "1,10,100,8,teamA,2,90.5\n2,11,3,2.0,teamB,0.5,4\n",
    )
    jobs = read_jobs(path, require_prediction=True)
    assert jobs["gpus"].tolist() == [8, 2]
    assert jobs["tenant"].tolist() == ["teamA", "teamB"]
    assert jobs["weight"].tolist() == [2.0, 0.5]
    assert jobs["predicted_duration"].tolist() == [90.5, 4.0]
    assert list(jobs.columns)[-1] == "predicted_duration"


def test_parquet_round_trip(tmp_path):
    frame = pd.DataFrame({"job_id": [3, 1, 2], "submit_time": [0, 1, 2], "duration": [1.0, 2.0, 3.0], "gpus": [1, 2, 4]})
    path = tmp_path / "jobs.parquet"
    frame.to_parquet(path)
    jobs = read_jobs(path)
    assert jobs["job_id"].tolist() == ["3", "1", "2"]  # int ids become text
    assert jobs["gpus"].tolist() == [1, 2, 4]
    again = tmp_path / "again.parquet"
    jobs.to_parquet(again)
    pd.testing.assert_frame_equal(read_jobs(again), jobs)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("job_id,duration\n1,5\n",
         "column 'submit_time': required column is missing (columns present: job_id, duration); name the file's columns with --columns submit_time=COLUMN"),
        ("job_id,submit_time\n1,5\n",
         "column 'duration': required column is missing (columns present: job_id, submit_time); name the file's columns with --columns duration=COLUMN"),
        ("submit_time,duration\n1,5\n",
         "column 'job_id': required column is missing (columns present: submit_time, duration); name the file's columns with --columns job_id=COLUMN"),
        ("job_id,submit_time,duration\n", "the jobs table has no rows"),
        ("job_id,submit_time,duration\na,0,1\nb,0,1\na,2,3\n",
         "row 3 (line 4): duplicate job_id 'a': row 1 (line 2) and row 3 (line 4)"),
        ("job_id,submit_time,duration\na,0,1\nb,0,-2\n", "row 2 (line 3): duration must be > 0, got -2"),
        ("job_id,submit_time,duration\na,0,0\n", "row 1 (line 2): duration must be > 0, got 0"),
        ("job_id,submit_time,duration\na,0,1\nb,0,inf\n", "row 2 (line 3): duration must be finite, got inf"),
        ("job_id,submit_time,duration\na,0,1\nb,0,\n", "row 2 (line 3): duration is missing/NaN"),
        ("job_id,submit_time,duration\na,0,1\nb,0,ten\n", "row 2 (line 3): duration is not a number: 'ten'"),
        ("job_id,submit_time,duration\na,nan,1\n", "row 1 (line 2): submit_time is missing/NaN"),
        ("job_id,submit_time,duration\na,0,1\nb,-inf,1\n", "row 2 (line 3): submit_time must be finite, got -inf"),
        ("job_id,submit_time,duration,gpus\na,0,1,1\nb,0,1,0\n", "row 2 (line 3): gpus must be >= 1, got 0"),
        ("job_id,submit_time,duration,gpus\na,0,1,1.5\n", "row 1 (line 2): gpus must be a whole number, got 1.5"),
        ("job_id,submit_time,duration,weight\na,0,1,0\n", "row 1 (line 2): weight must be > 0, got 0"),
        ("job_id,submit_time,duration,tenant\na,0,1,\n", "row 1 (line 2): tenant is empty"),
        ("job_id,submit_time,duration,predicted_duration\na,0,1,3\nb,0,1,-1\n",
         "row 2 (line 3): predicted_duration must be > 0, got -1"),
        ("job_id,submit_time,duration,predicted_duration\na,0,1,inf\n",
         "row 1 (line 2): predicted_duration must be finite, got inf"),
        ("job_id,submit_time,duration\na,0,1\n\nb,0,1\n", "row 2 (line 3): job_id is empty"),
    ],
)
def test_error_messages_name_file_row_and_problem(tmp_path, text, expected):
    path = write(tmp_path, text)
    assert str(error_of(path)) == f"{path}: {expected}"


def test_trailing_blank_lines_are_not_rows(tmp_path):
    path = write(tmp_path, "job_id,submit_time,duration\na,0,1\nb,0,2\n\n\n")
    assert read_jobs(path)["job_id"].tolist() == ["a", "b"]


def test_missing_column_lists_present_columns(tmp_path):
    path = write(tmp_path, "id,submit_time,duration\n1,0,1\n")
    message = str(error_of(path))
    assert message.startswith(f"{path}: column 'job_id': required column is missing")
    assert "columns present: id, submit_time, duration" in message
    assert message.endswith("name the file's columns with --columns job_id=id")  # the usual name, suggested


def test_file_level_errors(tmp_path):
    missing = tmp_path / "nope.csv"
    assert str(error_of(missing)) == f"{missing}: file not found"
    odd = write(tmp_path, "job_id\n", "jobs.txt")
    assert "unknown file extension" in str(error_of(odd))
    empty = write(tmp_path, "", "empty.csv")
    assert str(error_of(empty)) == f"{empty}: file is empty (no header, no rows)"
    broken = write(tmp_path, "not a parquet file", "broken.parquet")
    assert str(error_of(broken)).startswith(f"{broken}: cannot read parquet file")


def test_require_prediction_flag(tmp_path):
    path = write(tmp_path, "job_id,submit_time,duration\na,0,1\n")
    err = error_of(path, require_prediction=True)
    assert err.where == "column 'predicted_duration'" and err.path == str(path)


def test_validate_jobs_on_a_frame_in_memory():
    frame = pd.DataFrame({"job_id": ["x", "y"], "submit_time": [0.0, 1.0], "duration": [1.0, np.nan]})
    with pytest.raises(InputError) as info:
        validate_jobs(frame, "my-frame")
    assert str(info.value) == "my-frame: row 2: duration is missing/NaN"
    ok = validate_jobs(frame.assign(duration=[1.0, 2.0]))
    assert ok["duration"].tolist() == [1.0, 2.0]
    assert frame["duration"].isna().sum() == 1  # input untouched


def test_require_predictions_message():
    frame = validate_jobs(pd.DataFrame({"job_id": ["a"], "submit_time": [0.0], "duration": [1.0]}))
    with pytest.raises(InputError) as info:
        require_predictions(frame, "jobs.csv", ["spjf"])
    assert str(info.value) == (
        "jobs.csv: column 'predicted_duration': policy 'spjf' needs predicted durations: "
        "column 'predicted_duration' is missing (add it, or use --noise / --predictor)"
    )
    with pytest.raises(InputError, match="policies 'spjf', 'sprpt' need predicted"):
        require_predictions(frame, "jobs.csv", ["spjf", "sprpt"])
    require_predictions(frame, "jobs.csv", [])  # nothing needs p̂: fine
    require_predictions(frame.assign(predicted_duration=[2.0]), "jobs.csv", ["spjf"])
