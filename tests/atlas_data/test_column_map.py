"""`--columns` (jobs-table column = file column), delimiter detection and the missing-column suggestion."""

from __future__ import annotations

import pytest

from atlas_data.errors import InputError
from atlas_data.jobs_table import detect_delimiter, parse_column_map, read_jobs, suggest_column_map


def test_parse_column_map_keeps_the_order_given():
    mapping = parse_column_map("job_id=id, submit_time=submit,duration=runtime,gpus=gpus")
    assert mapping == {"job_id": "id", "submit_time": "submit", "duration": "runtime", "gpus": "gpus"}
    assert parse_column_map(None) == {}


@pytest.mark.parametrize("text, message", [
    ("job_id", "--columns: cannot read 'job_id': write JOBS_COLUMN=FILE_COLUMN, e.g. job_id=id"),
    ("jobid=id", "--columns: 'jobid' is not a jobs-table column (choose from job_id, submit_time, duration, gpus, "
                 "tenant, weight, predicted_duration)"),
    ("job_id=id,job_id=name", "--columns: 'job_id' is mapped twice"),
    ("job_id=id,tenant=id", "--columns: file column 'id' is mapped twice"),
    (",", "--columns: no mapping given: write JOBS_COLUMN=FILE_COLUMN, e.g. job_id=id"),
])
def test_bad_mappings(text, message):
    with pytest.raises(InputError) as info:
        parse_column_map(text)
    assert str(info.value) == message


def test_mapped_file_is_read_with_its_own_names(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("id,submit,runtime,gpus,team\n007,0,10,2,a\nx,5,20.5,1,b\n")
    jobs = read_jobs(path, columns=parse_column_map("job_id=id,submit_time=submit,duration=runtime,tenant=team"))
    assert jobs["job_id"].tolist() == ["007", "x"]  # ids stay text as written
    assert jobs["submit_time"].tolist() == [0.0, 5.0]
    assert jobs["duration"].tolist() == [10.0, 20.5]
    assert jobs["gpus"].tolist() == [2, 1]
    assert jobs["tenant"].tolist() == ["a", "b"]


def test_mapping_errors_name_the_column(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("id,submit,runtime,duration\na,0,10,11\n")
    with pytest.raises(InputError) as info:
        read_jobs(path, columns={"job_id": "ident"})
    assert str(info.value) == (f"{path}: column 'ident': --columns maps job_id to 'ident', which the file does not "
                               "have (columns present: id, submit, runtime, duration)")
    with pytest.raises(InputError) as info:
        read_jobs(path, columns={"job_id": "id", "submit_time": "submit", "duration": "runtime"})
    assert str(info.value) == (f"{path}: column 'duration': --columns maps duration to 'runtime', but the file has "
                               "its own 'duration' column too; map that one or rename it")


def test_missing_column_suggests_a_mapping():
    assert suggest_column_map(["id", "submit", "runtime", "gpus"]) == "job_id=id,submit_time=submit,duration=runtime"
    assert suggest_column_map(["JobID", "Arrival", "x", "num_gpus", "VC"]) == \
        "job_id=JobID,submit_time=Arrival,duration=COLUMN,gpus=num_gpus,tenant=VC"


@pytest.mark.parametrize("header, delimiter", [
    ("job_id,submit_time,duration", ","), ("job_id;submit_time;duration", ";"), ("job_id\tsubmit_time", "\t"),
    ("job_id", ","), ('"a;b",c', ","),  # one column; a quoted ; is not a delimiter
    ("a;b;c,d", ";"),  # the more frequent one (a comma inside a name)
])
def test_detect_delimiter(header, delimiter):
    assert detect_delimiter(header) == delimiter


def test_ambiguous_delimiter_is_stated(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("job_id;submit_time,duration\na;0,1\n")
    with pytest.raises(InputError) as info:
        read_jobs(path)
    assert str(info.value) == (f"{path}: cannot tell the delimiter from the header line (1 comma, 1 semicolon); "
                               "use one of comma, semicolon or tab")


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_files_read_like_commas(tmp_path, sep):
    path = tmp_path / "jobs.csv"
    path.write_text(sep.join(["job_id", "submit_time", "duration", "gpus"]) + "\n"
                    + sep.join(["a", "0", "1.5", "2"]) + "\n" + sep.join(["b", "3", "4", "1"]) + "\n")
    jobs = read_jobs(path)
    assert jobs["job_id"].tolist() == ["a", "b"]
    assert jobs["duration"].tolist() == [1.5, 4.0]
    assert jobs["gpus"].tolist() == [2, 1]


# real headers and first rows: alibaba/clusterdata (commit 7a6c496e4f4b6ce6150be8f881cb051bf2abff42, CC BY 4.0)
# cluster-trace-gpu-v2023/csv/openb_pod_list_gpushare100.csv and cluster-trace-gpu-v2020/analysis/philly_runtime.csv;
# the shipped Philly list (atlas_data/resources/philly/philly_jobs.csv)
@pytest.mark.parametrize("name, text, fmt", [
    ("openb_pod_list_gpushare100.csv",
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
     "openb-pod-0000,20000,65536,0,0,,LS,Running,2332613,12475899,2332615\n", "openb"),
    ("philly_jobs.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n", "philly"),
    ("philly_runtime.csv", "runtime\n0.0\n1.0\n", "helios"),
])
def test_a_published_trace_given_as_a_jobs_table_names_its_importer(tmp_path, name, text, fmt):
    # no --columns mapping can make these a jobs table (a duration from two columns, no id, no submit time)
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_jobs(path)
    assert str(info.value).endswith(f"convert it with benchmark data import --format {fmt} FILE --out JOBS.parquet")
    assert "--columns" not in str(info.value)


def test_a_helios_log_given_as_a_jobs_table_names_its_importer(tmp_path):
    # the example rows of cluster_log.csv in S-Lab-System-Group/HeliosData README.md (commit
    # 159f0caeec16600b9b6017862952a36aae01c43f): its submit times are date-time text
    path = tmp_path / "cluster_log.csv"
    path.write_text("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                    "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n")
    with pytest.raises(InputError) as info:
        read_jobs(path)
    assert str(info.value) == (f"{path}: row 1 (line 2): submit_time is not a number: '2020-06-09 18:41:01'; a jobs "
                               "table holds seconds: a Helios log's date-times are read by benchmark data import "
                               "--format helios FILE --out JOBS.parquet")
    path.write_text("job_id,submit_time,duration\na,soon,5\n")  # text that is no date-time: no hint
    with pytest.raises(InputError) as info:
        read_jobs(path)
    assert str(info.value) == f"{path}: row 1 (line 2): submit_time is not a number: 'soon'"
