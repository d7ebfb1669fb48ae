"""Philly and ElasticFlow importers on small real slices, the shipped copies, and bad input."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from atlas_data.adapters import (
    ELASTICFLOW_PATH,
    PHILLY_PATH,
    import_elasticflow,
    import_philly,
    import_trace,
    shipped_trace,
)
from atlas_data.errors import InputError

# the project's shared trace folder, found only relative to the checkout (shared/ beside it)
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
SHARED = SHARED if SHARED.is_dir() else None
PHILLY_HEAD = PHILLY_PATH.read_text().splitlines()[:6]  # header + the first 5 real rows


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.skipif(SHARED is None, reason="the shared trace folder is not beside the checkout, so the shipped copies cannot be compared")
def test_shipped_files_are_unmodified_copies_with_their_licences():
    assert _sha(PHILLY_PATH) == _sha(SHARED / "philly" / "philly_jobs.csv")
    assert _sha(ELASTICFLOW_PATH) == _sha(SHARED / "elasticflow" / "raw-traces.tar.gz")
    assert (PHILLY_PATH.parent / "LICENSE-CC-BY-4.0.txt").is_file() and (ELASTICFLOW_PATH.parent / "LICENSE").is_file()
    for folder in (PHILLY_PATH.parent, ELASTICFLOW_PATH.parent):
        assert "Please cite" in (folder / "README.md").read_text()


def test_philly_real_slice_vc_mapping_and_times(tmp_path):
    path = tmp_path / "philly_jobs.csv"
    path.write_text("\n".join(PHILLY_HEAD) + "\n")
    raw = pd.read_csv(path)
    jobs, report = import_philly(path)
    assert report.kept == 5 and report.dropped_total == 0
    assert list(jobs["job_id"]) == [f"philly-{i}" for i in range(1, 6)]
    assert list(jobs["tenant"]) == list(raw["cluster"].astype(str))  # tenant = VC, row by row
    assert list(jobs["gpus"]) == list(raw["num_gpus"]) and list(jobs["duration"]) == list(raw["duration"])
    # first row: 2017-10-09 07:01:55 UTC = 17448 days + 7 h 1 min 55 s after the epoch
    assert jobs["submit_time"].iloc[0] == 17448 * 86400 + 7 * 3600 + 60 + 55
    # the second row was submitted 48 min 52 s earlier (06:13:03)
    assert jobs["submit_time"].iloc[0] - jobs["submit_time"].iloc[1] == 48 * 60 + 52


# the header and first lines of cluster-trace-gpu-v2020/analysis/philly_runtime.csv (alibaba/clusterdata,
# commit 7a6c496e4f4b6ce6150be8f881cb051bf2abff42; CC BY 4.0): a runtime-only Philly file
PHILLY_RUNTIME_HEAD = "runtime\n0.0\n0.0\n1.0\n1.0\n1.0\n"


def test_philly_layouts_point_to_the_importer_that_reads_them(tmp_path):
    runtime = tmp_path / "philly_runtime.csv"
    runtime.write_text(PHILLY_RUNTIME_HEAD)
    with pytest.raises(InputError, match=r"column 'timestamp'.*runtime-only.*--format helios"):
        import_trace("philly", runtime)
    jobs, report = import_trace("helios", runtime)  # the importer it names reads it
    assert report.kept == 3 and report.dropped == {"no_duration": 0, "non_positive_duration": 2}
    job_list = tmp_path / "philly_jobs.csv"
    job_list.write_text("\n".join(PHILLY_HEAD) + "\n")
    with pytest.raises(InputError, match=r"column 'submit_time'.*a Philly job list: import it with --format philly"):
        import_trace("helios", job_list)
    # a column outside the Philly list layout is exit 2 naming it, never dropped silently
    job_list.write_text("\n".join([PHILLY_HEAD[0] + ",user"] + [row + ",u1" for row in PHILLY_HEAD[1:]]) + "\n")
    with pytest.raises(InputError, match=r"column 'user'.*cannot map column\(s\) user"):
        import_trace("philly", job_list)
    jobs, report = import_trace("philly", job_list, tenant_column="user")
    assert list(jobs["tenant"]) == ["u1"] * 5
    assert report.notes[0] == "tenant = 'user': 1 tenants"  # the user column is no virtual cluster


def test_philly_whole_shipped_file_has_15_vcs():
    jobs, card = shipped_trace("philly")
    assert len(jobs) == 82247 and jobs["tenant"].nunique() == 15
    raw = pd.read_csv(PHILLY_PATH, usecols=["cluster", "num_gpus"], dtype={"cluster": str})
    assert jobs.groupby("tenant")["gpus"].sum().to_dict() == raw.groupby("cluster")["num_gpus"].sum().to_dict()
    one, _ = shipped_trace("philly:6214e9")
    assert len(one) == int((raw["cluster"] == "6214e9").sum())


def test_philly_drops_and_bad_rows(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n"
                    "2017-10-09 07:01:55,66,1,66,a\n2017-10-09 07:02:00,0,1,0,a\n"
                    "2017-10-09 07:03:00,10,0,0,b\n2017-10-09 07:04:00,,2,,b\n")
    jobs, report = import_philly(path)
    assert report.kept == 1 and report.dropped == {"no_gpu": 1, "no_duration": 1, "non_positive_duration": 1}
    path.write_text("timestamp,duration,num_gpus,cluster\n2017-10-09 07:01:55,66,1,a\nyesterday,5,1,a\n")
    with pytest.raises(InputError, match=r"row 2 \(line 3\): timestamp is not a date-time"):
        import_philly(path)
    path.write_text("timestamp,duration,cluster\n2017-10-09 07:01:55,66,a\n")
    with pytest.raises(InputError, match="column 'num_gpus'"):
        import_philly(path)


def _tar(tmp_path, members: dict[str, str]) -> Path:
    path = tmp_path / "raw-traces.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _real_member_head(name: str, k: int) -> str:
    with tarfile.open(ELASTICFLOW_PATH, "r:gz") as tar:
        text = tar.extractfile(name).read().decode()
    return "\n".join(text.splitlines()[: k + 1]) + "\n"


def test_elasticflow_real_slices_tenant_is_cluster(tmp_path):
    a, b = _real_member_head("cluster01.csv", 3), _real_member_head("cluster10.csv", 2)
    path = _tar(tmp_path, {"cluster01.csv": a, "cluster10.csv": b, "LICENSE": "MIT"})
    jobs, report = import_elasticflow(path)
    assert report.rows_read == 5 and report.kept == 5
    assert list(jobs["tenant"]) == ["cluster01"] * 3 + ["cluster10"] * 2
    raw = pd.concat([pd.read_csv(io.StringIO(a)), pd.read_csv(io.StringIO(b))], ignore_index=True)
    assert list(jobs["job_id"]) == list(raw["job_id"])
    assert list(jobs["submit_time"]) == list(raw["submission_time"].astype(float))
    assert list(jobs["gpus"]) == list(raw["num_gpu"]) and list(jobs["duration"]) == list(raw["duration"].astype(float))
    one = tmp_path / "cluster01.csv"
    one.write_text(a)
    single, _ = import_elasticflow(one)
    assert list(single["tenant"]) == ["cluster01"] * 3


def test_elasticflow_shipped_counts_and_names():
    jobs, _ = shipped_trace("elasticflow")
    assert len(jobs) == 69351 and jobs["tenant"].nunique() == 10
    for name in ("elasticflow:cluster05", "elasticflow:05", "elasticflow:5"):
        part, card = shipped_trace(name)
        assert len(part) == 3629 and card["tenant"] == "cluster05"
    with pytest.raises(InputError, match="no cluster 'cluster11'"):
        shipped_trace("elasticflow:cluster11")
    with pytest.raises(InputError, match="no VC 'nope'"):
        shipped_trace("philly:nope")


def test_elasticflow_bad_member_names_member_and_row(tmp_path):
    good = "job_id,submission_time,duration,num_gpu\na,0,10,1\n"
    path = _tar(tmp_path, {"cluster01.csv": good, "cluster02.csv": "job_id,submission_time,duration,num_gpu\nb,5,x,1\n"})
    with pytest.raises(InputError) as err:
        import_elasticflow(path)
    assert "member cluster02.csv" in str(err.value) and "row 1 (line 2)" in str(err.value) and "duration is not a number" in str(err.value)
    dup = _tar(tmp_path, {"cluster01.csv": good, "cluster02.csv": good})
    with pytest.raises(InputError, match="duplicate job_id 'a'"):
        import_elasticflow(dup)
    with pytest.raises(InputError, match="unknown format"):
        import_trace("nope", dup)


# Real rows of the published `data/elasticflow-traces.tar.gz` (microsoft/elasticflow-traces, commit
# 277ed24d0e908c31a1c98145819e2e3853d8ac00; MIT): the layout with the generated columns, and a job that
# its 195job.csv (the testbed sample) repeats from cluster02.csv (line 4290 there)
EF_GENERATED_HEADER = "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
EF_195JOB = EF_GENERATED_HEADER + "bdd640fb-0667-1ad1-1c80-317fa3b1799d,3715485,3249,deepspeech2,3716178,32,1,1075\n"
EF_CLUSTER02 = (EF_GENERATED_HEADER + "f60b9881-76f3-6fc7-d009-6b2a00419afc,5010,41370,bert,6124,64,1,1265\n"
                "bdd640fb-0667-1ad1-1c80-317fa3b1799d,3715485,4404,gpt2,3716332,256,1,1075\n")


def test_elasticflow_generated_layout_is_read_and_its_generated_columns_are_named(tmp_path):
    path = tmp_path / "cluster02.csv"
    path.write_text(EF_CLUSTER02)
    jobs, report = import_elasticflow(path)
    assert list(jobs["job_id"]) == ["f60b9881-76f3-6fc7-d009-6b2a00419afc", "bdd640fb-0667-1ad1-1c80-317fa3b1799d"]
    assert list(jobs["submit_time"]) == [5010.0, 3715485.0] and list(jobs["duration"]) == [1265.0, 1075.0]
    assert list(jobs["gpus"]) == [1, 1] and list(jobs["tenant"]) == ["cluster02"] * 2
    assert any("not used: num_iteration, model_name, deadline, batch_size" in n for n in report.notes)
    # a column outside both published layouts is not lost silently
    other = tmp_path / "cluster03.csv"
    other.write_text("job_id,submission_time,duration,num_gpu,user\na,0,10,1,u1\n")
    with pytest.raises(InputError, match=r"column 'user'.*cannot map column\(s\) user.*--format jobs --columns"):
        import_elasticflow(other)


def test_elasticflow_id_in_two_members_names_both_members(tmp_path):
    path = _tar(tmp_path, {"195job.csv": EF_195JOB, "cluster02.csv": EF_CLUSTER02})
    with pytest.raises(InputError) as err:
        import_elasticflow(path)
    message = str(err.value)
    assert "member cluster02.csv, row 2 (line 3): duplicate job_id 'bdd640fb-0667-1ad1-1c80-317fa3b1799d'" in message
    assert "first seen in member 195job.csv, row 1 (line 2)" in message and "one at a time" in message


def test_elasticflow_tenant_column_is_named_in_the_notes(tmp_path):
    path = tmp_path / "cluster02.csv"
    # the two real rows, and a row made up for this test with an empty model_name
    path.write_text(EF_CLUSTER02 + "made-up-job,5020,100,,6200,64,1,1300\n")
    jobs, report = import_elasticflow(path, tenant_column="model_name")
    assert list(jobs["tenant"]) == ["bert", "gpt2", "default"]
    assert report.notes[0] == "tenant = 'model_name': 3 tenants"  # not "tenant = cluster: 3 clusters"
    assert "1 kept jobs have an empty 'model_name' and use tenant 'default'" in report.notes
    assert any(n.startswith("not used: num_iteration, deadline, batch_size (") for n in report.notes)


def test_the_raw_philly_json_log_is_pointed_to_the_job_list(tmp_path):
    """msr-fiddle/philly-traces publishes cluster_job_log as JSON (jobid, vc, submitted_time, attempts);
    it is not a table: the error says which shipped file and importer read Philly."""
    from atlas_data.adapters import import_trace

    log = tmp_path / "cluster_job_log.json"
    log.write_text('[{"jobid": "application_1506638472019_10238", "vc": "ee9e8c", "attempts": []}]')
    with pytest.raises(InputError) as info:
        import_trace("philly", log)
    message = str(info.value)
    assert "unknown file extension" in message and "--jobs philly" in message and "--format philly" in message
