"""Raw PAI reader: the three published layouts, projection, bad-row reports, one-line errors."""

import shutil
import tarfile

import pytest

from atlas_data.errors import InputError
from atlas_data.raw import COLUMNS, STEMS, read_raw_dir, read_table
from benchmark.cli import main

JOB_ROWS = [
    "j1,i1,u1,Terminated,100,400",
    "j2,i2,u1,Failed,150,200",
    "j3,i3,u2,Terminated,160,",
]
TASK_ROWS = ["j1,worker,2,Terminated,110,400,600,30,100,V100", "j2,worker,1,Failed,151,200,600,30,,",
             "j3,ps,1,Terminated,161,300,400,10,,"]
INST_ROWS = ["j1,worker,a,w1,i1,Terminated,110,390,m1", "j1,worker,b,w2,i1,Terminated,112,400,m2",
             "j2,worker,c,w3,i2,Failed,151,200,m3", "j3,ps,d,w4,i3,Terminated,161,300,m4"]
TAG_ROWS = ["i1,u1,V100,g1,bert", "i3,u2,,g2,"]


def _write(folder, table, rows, header="sibling"):
    stem = STEMS[table]
    text = "\n".join(rows) + "\n"
    if header == "row":
        text = ",".join(COLUMNS[table]) + "\n" + text
    (folder / f"{stem}.csv").write_text(text)
    if header == "sibling":
        (folder / f"{stem}.header").write_text(",".join(COLUMNS[table]) + "\n")


def _raw(folder, header="sibling", job_rows=JOB_ROWS):
    folder.mkdir(exist_ok=True)
    _write(folder, "job", job_rows, header)
    _write(folder, "task", TASK_ROWS, header)
    _write(folder, "instance", INST_ROWS, header)
    _write(folder, "group_tag", TAG_ROWS, header)
    return folder


@pytest.mark.parametrize("header", ["sibling", "row", "none"])
def test_layouts_read_the_same(tmp_path, header):
    raw = read_raw_dir(_raw(tmp_path / header, header))
    job = raw["job"]
    assert job.num_rows == 3
    # projection: only the needed columns are materialised
    assert job.column_names == ["job_name", "inst_id", "user", "status", "start_time"]
    assert raw["instance"].column_names == ["job_name", "start_time", "end_time"]
    assert raw["instance"].column("end_time").to_pylist() == [390, 400, 200, 300]
    assert raw["group_tag"].column("gpu_type_spec").to_pylist() == ["V100", None]
    assert raw.reports["job"].bad_rows == 0


def test_tar_gz_as_published(tmp_path):
    src = _raw(tmp_path / "src")
    dst = tmp_path / "tgz"
    dst.mkdir()
    for table in ("job", "task", "instance", "group_tag"):
        stem = STEMS[table]
        with tarfile.open(dst / f"{stem}.tar.gz", "w:gz") as tar:
            tar.add(src / f"{stem}.csv", arcname=f"{stem}.csv")
        shutil.copy(src / f"{stem}.header", dst / f"{stem}.header")
    raw = read_raw_dir(dst)
    assert raw["task"].num_rows == 3
    assert raw["task"].column("plan_gpu").to_pylist() == [100, None, None]


def test_bad_rows_are_counted_and_dropped(tmp_path):
    rows = JOB_ROWS + ["j4,i4,u1,Terminated", "j5,i5,u1,Terminated,soon,9", ",i6,u1,Terminated,1,2",
                       "j1,i7,u1,Terminated,5,6"] + [f"k{i},x{i},u,Terminated,{i},{i + 1}" for i in range(10)]
    folder = _raw(tmp_path / "bad", job_rows=rows)
    raw = read_raw_dir(folder)
    report = raw.reports["job"]
    assert raw["job"].num_rows == 13
    assert report.bad_rows == 4
    text = " | ".join(report.examples)
    assert "4 fields, expected 6" in text
    assert "column start_time: not a number 'soon'" in text
    assert "empty job_name" in text
    assert "duplicate job_name" in text


def test_instance_end_before_start_is_bad(tmp_path):
    folder = _raw(tmp_path / "inst")
    _write(folder, "instance", INST_ROWS + ["j3,ps,e,w5,i3,Terminated,500,100,m5"])
    raw = read_raw_dir(folder)
    assert raw.reports["instance"].bad_rows == 1
    assert "end_time before start_time" in raw.reports["instance"].examples[0]


def test_missing_column_is_an_input_error(tmp_path):
    folder = _raw(tmp_path / "col")
    (folder / "pai_job_table.header").write_text("job_name,inst_id,user,status,end_time\n")
    with pytest.raises(InputError, match=r"pai_job_table.csv: table job: missing column\(s\) start_time"):
        read_raw_dir(folder)


def test_missing_file_empty_file_and_garbage(tmp_path):
    folder = _raw(tmp_path / "f")
    (folder / "pai_task_table.csv").unlink()
    with pytest.raises(InputError, match="missing pai_task_table.csv"):
        read_raw_dir(folder)
    (folder / "pai_task_table.csv").write_text("")
    with pytest.raises(InputError, match="file is empty"):
        read_raw_dir(folder)
    (folder / "pai_task_table.csv").write_text("a;b;c\nd;e;f\n")
    with pytest.raises(InputError, match="rows are bad|no valid rows"):
        read_raw_dir(folder)
    with pytest.raises(InputError, match="raw folder not found"):
        read_raw_dir(tmp_path / "nope")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "pai_job_table.tar.gz").write_bytes(b"not a tarball")
    with pytest.raises(InputError, match="cannot open archive"):
        read_table(tmp_path / "broken" / "pai_job_table.tar.gz", "job")


def test_cli_malformed_raw_exits_2_with_one_line(tmp_path, capsys):
    folder = _raw(tmp_path / "cli")
    (folder / "pai_instance_table.header").write_text("job_name,task_name\n")
    code = main(["data", "build", "--source", "pai", "--raw-dir", str(folder), "--out", str(tmp_path / "ds"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "pai_instance_table.csv" in err and "start_time" in err
    assert not (tmp_path / "ds").exists()


def test_tar_gz_with_header_inside(tmp_path):
    src = _raw(tmp_path / "src")
    # reorder columns in the inner header to prove it is used
    (src / "pai_job_table.header").write_text("user,job_name,inst_id,status,start_time,end_time\n")
    (src / "pai_job_table.csv").write_text("u1,j1,i1,Terminated,100,400\nu2,j3,i3,Terminated,160,\n")
    dst = tmp_path / "inner"
    dst.mkdir()
    with tarfile.open(dst / "pai_job_table.tar.gz", "w:gz") as tar:
        tar.add(src / "pai_job_table.header", arcname="pai_job_table.header")
        tar.add(src / "pai_job_table.csv", arcname="pai_job_table.csv")
    data, report = read_table(dst / "pai_job_table.tar.gz", "job")
    assert data.column("user").to_pylist() == ["u1", "u2"]
    assert data.column("job_name").to_pylist() == ["j1", "j3"]
    assert report.rows == 2 and report.bad_rows == 0


def test_ragged_row_is_dropped_whatever_its_bytes(tmp_path, capsys):
    # fuzzing: a ragged row that is not UTF-8 printed a traceback from the row handler and aborted
    folder = _raw(tmp_path / "r")
    with open(folder / "pai_job_table.csv", "ab") as f:
        f.write(b"jobY\xe9,inst,user\xe9,Terminated,400000,400100,extra\n")
    data, report = read_table(folder / "pai_job_table.csv", "job")
    assert data.num_rows == 3 and report.bad_rows == 1
    assert report.examples[0].startswith("line 4: 7 fields, expected 6: ")
    assert "\\xe9" in report.examples[0] and "\xe9" not in report.examples[0]
    assert "not UTF-8" in report.examples[0]
    assert "Traceback" not in capsys.readouterr().err


def test_row_not_utf8_is_one_line_error_naming_the_line(tmp_path, capsys):
    folder = _raw(tmp_path / "u")
    with open(folder / "pai_job_table.csv", "ab") as f:
        f.write(b"jobZ\xe9,inst,user,Terminated,400000,400100\n")
    with pytest.raises(InputError, match=r"pai_job_table.csv: line 4: byte 0xe9 at column 5 is not UTF-8") as err:
        read_table(folder / "pai_job_table.csv", "job")
    assert "\xe9" not in str(err.value) and "\n" not in str(err.value)
    code = main(["data", "build", "--source", "pai", "--raw-dir", str(folder), "--out", str(tmp_path / "ds"), "--quiet"])
    captured = capsys.readouterr().err
    assert code == 2 and captured.count("\n") == 1 and "line 4" in captured and "Traceback" not in captured
    assert not (tmp_path / "ds").exists()


def test_header_file_not_utf8_is_an_input_error(tmp_path):
    folder = _raw(tmp_path / "h")
    (folder / "pai_job_table.header").write_bytes(b"job_name,inst_id,user\xe9,status,start_time,end_time\n")
    with pytest.raises(InputError, match=r"pai_job_table.header: header is not UTF-8"):
        read_table(folder / "pai_job_table.csv", "job")


def test_bad_row_examples_give_the_file_line(tmp_path):
    # ragged rows, empty lines and rows dropped earlier shift row indices against file lines;
    # the examples still name the real line (the ragged examples used to say "line ?")
    rows = ["j1,i1,u1,Terminated,100,400", "j2,i2,u1,Terminated", "", "j3,i3,u1,Terminated,soon,9",
            "j4,i4,u1,Terminated,5,6", ",i5,u1,Terminated,1,2"] + [f"k{i},x{i},u,Terminated,{i},{i + 1}" for i in range(6)]
    folder = _raw(tmp_path / "l", header="row", job_rows=rows)
    _, report = read_table(folder / "pai_job_table.csv", "job")
    assert report.bad_rows == 3
    assert sorted(report.examples) == ["line 3: 4 fields, expected 6: 'j2,i2,u1,Terminated'",
                                       "line 5: column start_time: not a number 'soon'",
                                       "line 7: empty job_name"]


def test_too_few_jobs_error_names_the_raw_folder(tmp_path, capsys):
    # fuzzing: a truncated instance table gave "the val split is empty (...)" naming no input
    folder = _raw(tmp_path / "few", job_rows=[f"j{i},i{i},u1,Terminated,100,{400 + i}" for i in range(4)])
    _write(folder, "task", [f"j{i},worker,1,Terminated,{101 + i},400,600,30,100,V100" for i in range(4)])
    _write(folder, "instance", [f"j{i},worker,a,w1,i1,Terminated,{101 + i},{300 + i},m1" for i in range(4)])
    code = main(["data", "build", "--source", "pai", "--raw-dir", str(folder), "--out", str(tmp_path / "ds"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {folder}: ") and "split is empty" in err
    assert not (tmp_path / "ds").exists()


def test_zero_instance_time_means_not_recorded(tmp_path):
    # The published trace writes 0 for an instance time it did not record (alibaba/clusterdata
    # cluster-trace-gpu-v2020/analysis/utils.py @7a6c496e turns start_time == 0 into NaN and keeps
    # only end_time > 0); its clock starts near 5e5 s. Values in the published format (4550879.0).
    # A 0 start gave p* = last end - 0 (52 days instead of 837 s) and a 0 end of a running
    # instance was a bad row "end_time before start_time" (fatal above 50 %).
    folder = _raw(tmp_path / "zero", job_rows=[f"j{i},i{i},u1,Terminated,{4550879.0 + 3600 * i},{4551416.0 + 3600 * i}"
                                               for i in range(10)] + ["r1,ir,u1,Running,4600000.0,"])
    _write(folder, "task", [f"j{i},tensorflow,1.0,Terminated,{4550879.0 + 3600 * i},0.0,600.0,29.296875,50.0,MISC"
                            for i in range(10)] + ["r1,worker,2.0,Running,4600000.0,,600.0,29.296875,100.0,V100"])
    _write(folder, "instance", [f"j{i},tensorflow,a{i},w{i},i{i},Terminated,{4550879.0 + 3600 * i},"
                                f"{4551716.0 + 3600 * i},m1" for i in range(10)]
           + ["j3,tensorflow,z,wz,i3,Failed,0.0,0.0,", "r1,worker,b,wb,ir,Running,4600001.0,0.0,m2",
              "r1,worker,c,wc,ir,Running,4600002.0,0.0,m3"])
    raw = read_raw_dir(folder)
    assert raw.reports["instance"].bad_rows == 0
    assert raw["instance"].column("start_time").to_pylist()[10:] == [None, 4600001.0, 4600002.0]
    assert raw["instance"].column("end_time").to_pylist()[10:] == [None, None, None]
    code = main(["data", "build", "--source", "pai", "--raw-dir", str(folder), "--out", str(tmp_path / "ds"), "--quiet"])
    assert code == 0
    import pandas as pd

    ds = pd.read_parquet(tmp_path / "ds" / "atlas.parquet").set_index("job_id")
    assert ds.loc["j3", "p_star"] == 837.0
    assert (ds["p_star"] == 837.0).all()
