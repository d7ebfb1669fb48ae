"""Standard Workload Format importer: a small log written from the 18 published SWF fields, −1 as missing."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from atlas_data.adapters import SWF_FIELDS, import_swf, import_trace, is_swf_path, swf_feature_columns
from atlas_data.errors import InputError


def swf_line(job, submit, wait, run, alloc, req_procs, req_time, status, user, group, exe, queue, part=1,
             req_mem=-1) -> str:
    """One SWF line in the published field order (average CPU time, used memory, preceding job and
    think time are left missing, −1, as most archive logs do)."""
    fields = [job, submit, wait, run, alloc, -1, -1, req_procs, req_time, req_mem, status, user, group, exe, queue,
              part, -1, -1]
    assert len(fields) == len(SWF_FIELDS) == 18
    return " ".join(str(f) for f in fields)


HEADER = [
    "; Version: 2.2",
    "; Computer: a test machine",
    "; MaxJobs: 7",
    "; MaxProcs: 64",
    ";",
]
JOBS = [
    swf_line(1, 0, 5, 100, 4, 4, 200, 1, 3, 1, 7, 1),           # a normal job
    swf_line(2, 10, 0, -1, 2, 2, 100, 5, 4, 2, 8, 2),           # cancelled before it ran: run time −1
    swf_line(3, 20, 1, 50, -1, 8, 300, 1, 3, 1, 7, 1, req_mem=512),  # no allocated count: requested 8
    swf_line(4, 30, 2, 0, 1, 1, 60, 0, -1, 2, 9, 2),            # ran for 0 s
    swf_line(5, 40, 0, 300, 16, 16, 3600, 1, 4, 2, 8, 1),
    swf_line(6, 50, 0, 20, 1, -1, -1, 1, -1, 1, 7, 1),          # no user: tenant "default"
    swf_line(7, 60, 3, 45, -1, -1, 90, 1, 5, 3, 7, 1),          # no processor count at all
]


def write_log(tmp_path, lines, name="log.swf"):
    path = tmp_path / name
    text = "\n".join(lines) + "\n"
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_fields_map_to_the_jobs_table_and_drops_are_counted(tmp_path):
    jobs, report = import_swf(write_log(tmp_path, HEADER + JOBS))
    assert jobs["job_id"].tolist() == ["1", "3", "5", "6"]
    assert jobs["submit_time"].tolist() == [0.0, 20.0, 40.0, 50.0]
    assert jobs["duration"].tolist() == [100.0, 50.0, 300.0, 20.0]       # run time, not wait + run
    assert jobs["gpus"].tolist() == [4, 8, 16, 1]                        # allocated, else requested
    assert jobs["tenant"].tolist() == ["3", "3", "4", "default"]          # user id
    assert report.rows_read == 7 and report.kept == 4
    assert report.dropped == {"no_submit_time": 0, "no_processors": 1, "no_duration": 1, "non_positive_duration": 1}
    lines = report.summary_lines()
    assert lines[0].endswith("kept 4, dropped 3")
    assert "  dropped 1: no_duration" in lines and "  dropped 1: non_positive_duration" in lines
    assert any("5 header comment line(s)" in line for line in lines)
    assert any("1 kept jobs have no allocated processors and use the requested ones" in line for line in lines)
    assert any("1 kept jobs have no user (−1) and use tenant 'default'" in line for line in lines)


def test_submit_time_fields_are_kept_as_feature_columns(tmp_path):
    jobs, _ = import_swf(write_log(tmp_path, HEADER + JOBS))
    assert jobs["user_id"].tolist() == ["3", "3", "4", None]
    assert jobs["group_id"].tolist() == ["1", "1", "2", "1"]
    assert jobs["queue_id"].tolist() == ["1", "1", "1", "1"]
    assert jobs["executable_id"].tolist() == ["7", "7", "8", "7"]
    np.testing.assert_array_equal(jobs["requested_time"], [200.0, 300.0, 3600.0, np.nan])
    np.testing.assert_array_equal(jobs["requested_processors"], [4.0, 8.0, 16.0, np.nan])
    np.testing.assert_array_equal(jobs["requested_memory"], [np.nan, 512.0, np.nan, np.nan])
    assert "wait_time" not in jobs.columns and "status" not in jobs.columns  # outcomes, never features
    columns = swf_feature_columns(jobs)
    # user_id is the tenant (the same groups, −1 as 'default'); queue and partition are one value throughout
    assert columns.categorical == ("tenant", "group_id", "executable_id")
    assert columns.numeric == ("gpus", "requested_time", "requested_processors", "requested_memory")
    # a field missing in every kept row is no feature
    columns = swf_feature_columns(jobs.assign(requested_memory=np.nan))
    assert "requested_memory" not in columns.numeric


@pytest.mark.parametrize("tenant, expected, features", [
    ("group", ["1", "1", "2", "1"], ("tenant", "user_id")),  # executable 7/8 groups these 4 jobs as group 1/2 does
    ("queue", ["1", "1", "1", "1"], ("tenant", "user_id", "group_id", "executable_id")),
])
def test_tenant_by_group_or_queue(tmp_path, tenant, expected, features):
    jobs, _ = import_trace("swf", write_log(tmp_path, HEADER + JOBS), tenant_column=tenant)
    assert jobs["tenant"].tolist() == expected
    assert swf_feature_columns(jobs).categorical == features  # the tenant's own field is not a second feature


def test_gzip_log_and_extension_rule(tmp_path):
    jobs, _ = import_swf(write_log(tmp_path, HEADER + JOBS, name="log.swf.gz"))
    assert jobs["job_id"].tolist() == ["1", "3", "5", "6"]
    assert is_swf_path("x/LOG.SWF") and is_swf_path("a.swf.gz") and not is_swf_path("a.csv")


@pytest.mark.parametrize("bad, message", [
    ("1 0 5 100 4 -1 -1 4 200 -1 1 3 1 7 1 1 -1", "line 8: expected 18 whitespace-separated SWF fields, got 17"),
    ("1 0 5 abc 4 -1 -1 4 200 -1 1 3 1 7 1 1 -1 -1", "line 8: field 4 (run_time) is not a number: 'abc'"),
    # "nan" and "inf" parse as floats: a missing value is −1, never a silently dropped row
    ("1 0 5 100 4 -1 -1 4 200 -1 nan 3 1 7 1 1 -1 -1",
     "line 8: field 11 (status) is not a finite number: 'nan' (−1 marks a missing value)"),
    ("1 0 5 inf 4 -1 -1 4 200 -1 1 3 1 7 1 1 -1 -1",
     "line 8: field 4 (run_time) is not a finite number: 'inf' (−1 marks a missing value)"),
])
def test_a_bad_line_is_named(tmp_path, bad, message):
    path = write_log(tmp_path, HEADER + JOBS[:2] + [bad] + JOBS[2:])  # header: 5 lines, then lines 6, 7, 8
    with pytest.raises(InputError) as info:
        import_swf(path)
    assert str(info.value) == f"{path}: {message}"


def test_duplicate_job_numbers_name_their_lines(tmp_path):
    path = write_log(tmp_path, HEADER + JOBS + [swf_line(3, 70, 0, 10, 1, 1, 10, 1, 3, 1, 7, 1)])
    with pytest.raises(InputError) as info:
        import_swf(path)
    assert str(info.value) == f"{path}: row 8 (line 13): duplicate job_id '3': row 3 (line 8) and row 8 (line 13)"


def test_bad_tenant_and_empty_log(tmp_path):
    with pytest.raises(InputError, match="an SWF tenant is one of user, group, queue, partition"):
        import_swf(write_log(tmp_path, HEADER + JOBS), tenant_column="vc")
    with pytest.raises(InputError, match="the SWF log has no job lines"):
        import_swf(write_log(tmp_path, HEADER, name="empty.swf"))
