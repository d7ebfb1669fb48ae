"""Trace adapters: the real openb pod list, Helios / Philly logs, atomic conversion, shipped data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from atlas_data.adapters import (
    convert,
    default_jobs,
    default_pod_trace_path,
    import_helios,
    import_jobs,
    import_openb,
    import_trace,
)
from atlas_data.errors import InputError
from atlas_data.jobs_table import read_jobs

# the project's shared trace folder, found only relative to the checkout (shared/ beside it)
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
RESOURCES = Path(__file__).resolve().parents[2] / "atlas_data" / "resources" / "openb"


@pytest.fixture(scope="module")
def openb_raw() -> pd.DataFrame:
    return pd.read_csv(default_pod_trace_path())


@pytest.fixture(scope="module")
def openb_imported():
    return import_openb(default_pod_trace_path())


def test_shipped_files_are_the_shared_copies():
    for name in ("openb_pod_list_default.csv", "openb_node_list_gpu_node.csv", "openb_node_list_all_node.csv"):
        shipped = RESOURCES / name
        assert shipped.is_file()
        if (SHARED / "openb-v2023" / name).is_file():
            assert shipped.read_bytes() == (SHARED / "openb-v2023" / name).read_bytes()
    readme = (RESOURCES / "README.md").read_text()
    assert "cluster-trace-gpu-v2023" in readme and "Beware of Fragmentation" in readme
    assert default_pod_trace_path() == RESOURCES / "openb_pod_list_default.csv"


def test_openb_counts_match_plain_pandas(openb_raw, openb_imported):
    raw = openb_raw
    jobs, report = openb_imported
    no_gpu = raw["num_gpu"] == 0
    unscheduled = raw["scheduled_time"].isna() & ~no_gpu
    kept = raw[~no_gpu & ~unscheduled]
    assert len(raw) == 8152
    assert report.rows_read == 8152
    assert report.dropped == {
        "no_gpu": int(no_gpu.sum()),
        "never_scheduled": int(unscheduled.sum()),
        "non_positive_duration": int(((kept["deletion_time"] - kept["scheduled_time"]) <= 0).sum()),
    }
    assert report.kept == len(jobs) == len(kept)
    # the numbers themselves, as read from the real file when this test was written
    assert (report.kept, report.dropped["no_gpu"], report.dropped["never_scheduled"]) == (6203, 1088, 861)
    assert report.dropped_total == len(raw) - len(jobs)


def test_openb_values_follow_the_mapping(openb_raw, openb_imported):
    jobs, report = openb_imported
    raw = openb_raw.set_index("name")
    sel = raw.loc[jobs["job_id"].tolist()]
    np.testing.assert_array_equal(jobs["submit_time"].to_numpy(), sel["creation_time"].to_numpy(dtype=float))
    np.testing.assert_array_equal(
        jobs["duration"].to_numpy(), (sel["deletion_time"] - sel["scheduled_time"]).to_numpy(dtype=float)
    )
    np.testing.assert_array_equal(jobs["gpus"].to_numpy(), sel["num_gpu"].to_numpy())
    assert jobs["tenant"].tolist() == sel["qos"].tolist()
    assert jobs["gpus"].min() >= 1 and (jobs["duration"] > 0).all()
    first = jobs.iloc[0]
    assert (first["job_id"], first["submit_time"], first["duration"], first["gpus"], first["tenant"]) == (
        "openb-pod-0000", 0.0, 12537496.0, 1, "LS")
    shared_gpu = int(((sel["num_gpu"] == 1) & (sel["gpu_milli"] < 1000)).sum())
    assert f"{shared_gpu} kept pods share a GPU (gpu_milli < 1000) and count as gpus = 1" in report.notes


def test_openb_tenant_column_choice():
    jobs, _ = import_openb(default_pod_trace_path(), tenant_column="pod_phase")
    assert set(jobs["tenant"]) == {"Running", "Failed", "Succeeded"}  # Pending pods never ran
    with pytest.raises(InputError) as info:
        import_openb(default_pod_trace_path(), tenant_column="team")
    assert info.value.where == "column 'team'"


def test_default_jobs_is_the_imported_trace(openb_imported):
    jobs = default_jobs()
    pd.testing.assert_frame_equal(jobs, openb_imported[0])
    jobs.loc[0, "duration"] = -1.0  # a caller's change must not leak into the next call
    assert default_jobs()["duration"].iloc[0] == 12537496.0


OPENB_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"


def test_openb_small_file_drops_by_reason(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text(
        OPENB_HEADER
        + "p0,1000,1,1,500,,BE,Running,0,100,10\n"  # kept: duration 90, shared GPU
        + "p1,1000,1,0,0,,LS,Running,5,100,5\n"  # no GPU
        + "p2,1000,1,2,1000,,LS,Pending,6,100,\n"  # never scheduled
        + "p3,1000,1,4,1000,,LS,Failed,7,50,50\n"  # zero duration
        + "p4,1000,1,8,1000,,,Succeeded,8,60,9\n"  # kept, empty qos -> default tenant
    )
    jobs, report = import_openb(path)
    assert jobs["job_id"].tolist() == ["p0", "p4"]
    assert jobs["duration"].tolist() == [90.0, 51.0]
    assert jobs["gpus"].tolist() == [1, 8]
    assert jobs["tenant"].tolist() == ["BE", "default"]
    assert report.dropped == {"no_gpu": 1, "never_scheduled": 1, "non_positive_duration": 1}
    assert "1 kept jobs have an empty 'qos' and use tenant 'default'" in report.notes


def test_openb_errors_name_file_and_place(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text(OPENB_HEADER + "p0,1,1,1,1000,,BE,Running,0,100,10\np1,1,1,one,1000,,BE,Running,0,100,10\n")
    with pytest.raises(InputError) as info:
        import_openb(path)
    assert str(info.value) == f"{path}: row 2 (line 3): num_gpu is not a number: 'one'"
    path.write_text(OPENB_HEADER + "p0,1,1,1,1000,,BE,Running,0,100,10\np1,1,1,0,0,,BE,Running,0,100,10\n"
                    "p0,1,1,1,1000,,BE,Running,0,100,10\n")
    with pytest.raises(InputError) as info:
        import_openb(path)  # the duplicate is reported with its line in the original file
    assert str(info.value) == f"{path}: row 3 (line 4): duplicate job_id 'p0': row 1 (line 2) and row 3 (line 4)"
    path.write_text("name,num_gpu\np0,1\n")
    with pytest.raises(InputError, match="column 'creation_time': an openb pod list needs this column"):
        import_openb(path)


def test_helios_log_with_datetimes(tmp_path):
    path = tmp_path / "cluster_log.csv"
    path.write_text(
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration\n"
        "j1,u1,vcA,8,32,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:10,2020-04-01 01:00:10,3600\n"
        "j2,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:00:05,2020-04-01 00:00:05,2020-04-01 00:01:05,60\n"
        "j3,u1,vcA,1,4,1,FAILED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:01:00,0\n"
        "j4,u3,vcB,2,8,1,CANCELLED,2020-04-01 00:02:00,,,\n"
        "j5,u3,vcB,2,8,1,TIMEOUT,2020-04-01 00:03:00,2020-04-01 00:03:00,2020-04-01 00:05:00,120\n"
    )
    jobs, report = import_helios(path)
    assert jobs["job_id"].tolist() == ["j1", "j5"]
    start = pd.Timestamp("2020-04-01 00:00:00", tz="UTC").timestamp()
    assert jobs["submit_time"].tolist() == [start, start + 180]
    assert jobs["duration"].tolist() == [3600.0, 120.0]
    assert jobs["gpus"].tolist() == [8, 2]
    assert jobs["tenant"].tolist() == ["vcA", "vcB"]
    assert report.dropped == {"no_gpu": 1, "no_duration": 1, "non_positive_duration": 1}
    jobs_user, _ = import_helios(path, tenant_column="user")
    assert jobs_user["tenant"].tolist() == ["u1", "u3"]


def test_parquet_pod_list_rows_have_no_lines(tmp_path):
    frame = pd.DataFrame({"name": ["a", "b", "c"], "num_gpu": [0, 1, 1], "creation_time": [0, 1, float("nan")],
                          "deletion_time": [5, 6, 7], "scheduled_time": [1, 2, 3], "qos": ["LS", "BE", "BE"]})
    path = tmp_path / "pods.parquet"
    frame.to_parquet(path)
    with pytest.raises(InputError) as info:
        import_openb(path)
    # the source row, after a dropped row, and the file's own column (not the jobs table's submit_time)
    assert str(info.value) == f"{path}: row 3: creation_time is missing/NaN"


def test_helios_duration_from_start_and_end_seconds(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("job_id,gpu_num,submit_time,start_time,end_time\na,1,0,5,25\nb,2,3,30,31.5\n")
    jobs, report = import_helios(path)
    assert jobs["duration"].tolist() == [20.0, 1.5]
    assert jobs["tenant"].tolist() == ["default", "default"]
    path.write_text("job_id,gpu_num,submit_time,start_time,end_time\na,1,0,5,25\nb,2,yesterday,30,31.5\n")
    with pytest.raises(InputError) as info:
        import_helios(path)
    assert str(info.value) == f"{path}: row 2 (line 3): submit_time is not a number (the column holds seconds): 'yesterday'"


def test_philly_runtime_only_file_is_a_batch():
    path = SHARED / "philly" / "philly_runtime.csv"
    if not path.is_file():
        pytest.skip(f"the Philly run-time sample is not beside the checkout ({path} is absent)")
    raw = pd.read_csv(path)
    jobs, report = import_helios(path)
    positive = raw["runtime"] > 0
    assert len(raw) == 83154
    assert report.kept == len(jobs) == int(positive.sum())
    assert report.dropped == {"no_duration": int(raw["runtime"].isna().sum()),
                              "non_positive_duration": int((raw["runtime"] <= 0).sum())}
    assert (jobs["submit_time"] == 0).all() and (jobs["gpus"] == 1).all()
    first_kept = int(np.argmax(positive.to_numpy()))
    assert jobs["job_id"].iloc[0] == f"philly-{first_kept + 1}"
    np.testing.assert_array_equal(jobs["duration"].to_numpy(), raw["runtime"][positive].to_numpy())


def test_convert_round_trip_and_atomicity(tmp_path):
    out = tmp_path / "jobs.parquet"
    report = convert("openb", default_pod_trace_path(), out)
    assert report.kept == 6203
    back = read_jobs(out)
    pd.testing.assert_frame_equal(back, default_jobs())
    again, again_report = import_jobs(out)
    pd.testing.assert_frame_equal(again[list(back.columns)], back)
    # the pods' requests ride along (the shipped trace's feature columns)
    assert list(again.columns[len(back.columns):]) == ["gpu_spec", "cpu_milli", "memory_mib", "gpu_milli"]
    assert again_report.dropped == {}

    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_time,duration\na,0,1\na,0,2\n")
    target = tmp_path / "never.parquet"
    with pytest.raises(InputError):
        convert("jobs", bad, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "jobs.parquet"]  # no temp file left

    with pytest.raises(InputError, match="output must be a .parquet file"):
        convert("openb", default_pod_trace_path(), tmp_path / "jobs.csv")


# The header and the first three real pods of cluster-trace-gpu-v2023/csv/openb_pod_list_gpuspec33.csv
# (alibaba/clusterdata, commit 7a6c496e4f4b6ce6150be8f881cb051bf2abff42; CC BY 4.0), and two pods of the
# same file that request a GPU type (line 11) and were scheduled after their creation (line 14)
OPENB_GPUSPEC33 = (OPENB_HEADER
                   + "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                   + "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                   + "openb-pod-0002,12000,24576,1,1000,,LS,Running,1558381,12902960,1558381\n")


def test_openb_import_keeps_the_pods_requests_and_names_what_it_does_not_use(tmp_path):
    path = tmp_path / "openb_pod_list_gpuspec33.csv"
    path.write_text(OPENB_GPUSPEC33 + "openb-pod-0009,12000,16384,1,1000,V100M16|V100M32,LS,Running,4975773,12902960,4975773\n"
                    "openb-pod-0012,8000,32768,1,1000,T4,LS,Running,6588193,10959245,6595531\n")
    jobs, report = import_trace("openb", path)
    assert list(jobs.columns[:6]) == ["job_id", "submit_time", "duration", "gpus", "tenant", "weight"]
    assert jobs["cpu_milli"].tolist() == [12000, 6000, 12000, 12000, 8000]
    assert jobs["memory_mib"].tolist() == [16384, 12288, 24576, 16384, 32768]
    assert jobs["gpu_milli"].tolist() == [1000, 460, 1000, 1000, 1000]
    assert jobs["gpu_spec"].tolist()[3:] == ["V100M16|V100M32", "T4"]
    assert jobs["submit_time"].tolist() == [0.0, 427061.0, 1558381.0, 4975773.0, 6588193.0]
    assert jobs["duration"].tolist() == [12537496.0, 12475899.0, 11344579.0, 7927187.0, 10959245.0 - 6595531.0]
    assert any("kept the pods' requests as they are: gpu_spec, cpu_milli, memory_mib, gpu_milli" in n for n in report.notes)
    assert any(n.startswith("not used: pod_phase") for n in report.notes)
    # the default trace (no features) and the shipped one (features) are unchanged
    assert "cpu_milli" not in default_jobs().columns
    # a column outside the pod-list layout is exit 2 naming it, never dropped silently
    path.write_text(OPENB_HEADER.rstrip("\n") + ",team\n" + "p0,1000,1,1,1000,,BE,Running,0,100,10,t1\n")
    with pytest.raises(InputError, match=r"column 'team'.*cannot map column\(s\) team"):
        import_trace("openb", path)
    jobs, _ = import_trace("openb", path, tenant_column="team")  # named as the tenant, it is used
    assert jobs["tenant"].tolist() == ["t1"]


def test_openb_empty_tenant_note_counts_kept_pods_only(tmp_path):
    # real pods of openb_pod_list_gpuspec33.csv (see OPENB_GPUSPEC33) with tenant = gpu_spec, plus the CPU pod
    # on line 2 of openb_pod_list_gpushare100.csv (same commit), renamed openb-pod-9000 as its name is taken
    # above: its empty gpu_spec is dropped with it (no_gpu) and is not counted
    path = tmp_path / "pods.csv"
    path.write_text(OPENB_GPUSPEC33 + "openb-pod-0009,12000,16384,1,1000,V100M16|V100M32,LS,Running,4975773,12902960,4975773\n"
                    "openb-pod-9000,20000,65536,0,0,,LS,Running,2332613,12475899,2332615\n")
    jobs, report = import_openb(path, tenant_column="gpu_spec")
    assert jobs["tenant"].tolist() == ["default"] * 3 + ["V100M16|V100M32"]
    assert "3 kept jobs have an empty 'gpu_spec' and use tenant 'default'" in report.notes
