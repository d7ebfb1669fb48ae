"""`benchmark data import --format openb|helios|philly|elasticflow|swf|jobs FILE --out JOBS.parquet`: a real trace to a jobs table.

Prints what was read, kept and dropped (by reason) on stdout unless --quiet; bad input raises
InputError (exit 2, one line) and writes nothing. May import atlas_data.
"""

from __future__ import annotations

from atlas_data.adapters import FORMATS, convert
from atlas_data.jobs_table import parse_column_map


def register(data_subparsers) -> None:
    parser = data_subparsers.add_parser(
        "import",
        help="convert a real trace (openb pod list, Helios log, Philly job list, ElasticFlow traces, SWF log, jobs table) to a jobs parquet",
        description=(
            "Convert a trace to the jobs table (job_id, submit_time, duration, gpus, tenant, weight "
            "[, predicted_duration]). Dropped rows are counted by reason. Formats: openb (Alibaba v2023 pod "
            "list, tenant = qos), helios (Helios job log / runtime-only Philly file), philly (philly_jobs.csv: "
            "timestamp, duration, num_gpus, cluster; tenant = VC), elasticflow (raw-traces.tar.gz or one "
            "clusterNN.csv: job_id, submission_time, duration, num_gpu; tenant = cluster), swf (a Standard "
            "Workload Format log of the Parallel Workloads Archive; tenant = user), jobs (our format; --columns "
            "maps other column names). A column an importer cannot map is an error, never dropped. "
            "The Philly and ElasticFlow files ship in atlas_data/resources/ (see docs/real-traces.md)."
        ),
    )
    parser.add_argument("--format", required=True, choices=FORMATS, help="input format")
    parser.add_argument("file", metavar="FILE", help="input trace (.csv, .csv.gz, .parquet; elasticflow also .tar.gz; swf: the .swf log, also .swf.gz)")
    parser.add_argument("--out", required=True, metavar="JOBS.parquet", help="output jobs table (parquet)")
    parser.add_argument(
        "--tenant-column",
        default=None,
        metavar="COLUMN",
        help="input column used as tenant (openb default: qos; helios: vc, tenant or user; philly: cluster; elasticflow: the cluster file name; swf: user, group, queue or partition, default user)",
    )
    parser.add_argument(
        "--columns",
        default=None,
        metavar="JOBS_COL=FILE_COL,...",
        help="with --format jobs: the file's name for each jobs-table column, e.g. "
             "job_id=id,submit_time=submit,duration=runtime,gpus=gpus (docs/data-formats.md#column-mapping---columns)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    parser.set_defaults(handler=_handle)


def _handle(args) -> int:
    columns = parse_column_map(args.columns)
    report = convert(args.format, args.file, args.out, tenant_column=args.tenant_column, columns=columns)
    if not args.quiet:
        for line in report.summary_lines():
            print(line)
        print(f"wrote {report.kept} jobs to {args.out}")
    return 0
