"""Perf section `--pipeline` (docs/performance.md): a full-scale synthetic PAI trace to features.

Stage 1 (a child process, so its memory is reported apart): synthesise N jobs (default
1,200,000 ≈ 7 M instances) and write the raw header-less CSVs. Stage 2 (this process): read the
raw folder, assemble jobs, label, split, compute features, write the parquet. Prints and returns
wall time per stage and peak RSS (resource.getrusage) of each process, against the targets
< 5 min and < 8 GB for stage 2 (raw tables -> features).

May import: atlas_data, benchmark.progress.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark.options import seed as seed_type
from benchmark.options import synthetic_jobs

TARGET_SECONDS = 300.0
TARGET_PEAK_GB = 8.0


def add_arguments(parser) -> None:
    group = parser.add_argument_group("pipeline section")
    group.add_argument("--pipeline-jobs", type=synthetic_jobs, default=1_200_000,
                       help="synthetic jobs for --pipeline (default 1,200,000; 1 to 2,000,000, as `data synth --jobs`)")
    group.add_argument("--pipeline-seed", type=seed_type, default=0, help="seed for --pipeline (default 0)")
    group.add_argument("--pipeline-dir", help="work folder for --pipeline (default: a temporary folder, removed)")


def _rss_gb(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024**2  # Linux: KiB


def run(args) -> dict:
    from atlas_data.build import build_frame, write_dataset
    from atlas_data.raw import read_raw_dir
    from benchmark.progress import say

    quiet = getattr(args, "quiet", False)
    n = int(getattr(args, "pipeline_jobs", 1_200_000))
    seed = int(getattr(args, "pipeline_seed", 0))
    own = getattr(args, "pipeline_dir", None) is None
    work = Path(args.pipeline_dir) if not own else Path(tempfile.mkdtemp(prefix="atlas-perf-"))
    raw_dir, ds_dir = work / "raw", work / "dataset"
    figures: dict = {"jobs": n, "seed": seed}
    try:
        say(f"[pipeline] synthesising {n:,} jobs into {raw_dir}", quiet)
        t = time.perf_counter()
        code = (
            "import sys, time, json, resource\n"
            "from atlas_data.synth import synthesize, write_raw\n"
            "t = time.perf_counter(); tables = synthesize(int(sys.argv[1]), int(sys.argv[2]))\n"
            "t1 = time.perf_counter(); write_raw(tables, sys.argv[3]); t2 = time.perf_counter()\n"
            "print(json.dumps({'synth_s': t1 - t, 'write_csv_s': t2 - t1,\n"
            "  'instances': tables['instance'].num_rows, 'tasks': tables['task'].num_rows}))\n"
        )
        child = subprocess.run([sys.executable, "-c", code, str(n), str(seed), str(raw_dir)],
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            raise RuntimeError(f"synthetic generator failed: {child.stderr.strip().splitlines()[-1:]}")
        import json

        figures.update(json.loads(child.stdout.strip().splitlines()[-1]))
        figures["synth_total_s"] = time.perf_counter() - t
        figures["synth_peak_rss_gb"] = _rss_gb(resource.RUSAGE_CHILDREN)
        figures["raw_csv_mb"] = sum(p.stat().st_size for p in raw_dir.glob("*.csv")) / 1e6

        t0 = time.perf_counter()
        raw = read_raw_dir(raw_dir)
        figures["read_raw_s"] = time.perf_counter() - t0
        figures["read_peak_rss_gb"] = _rss_gb()
        ds, card = build_frame(raw, source="pai")
        del raw
        figures.update({k: v for k, v in card["timings"].items()})
        t = time.perf_counter()
        card = write_dataset(ds, card, ds_dir)
        figures["write_parquet_s"] = time.perf_counter() - t
        figures["raw_to_features_s"] = time.perf_counter() - t0
        figures["pipeline_peak_rss_gb"] = _rss_gb()
        figures["kept"] = card["counts"]["kept"]
        figures["targets"] = {"raw_to_features_s": TARGET_SECONDS, "peak_rss_gb": TARGET_PEAK_GB}
        figures["meets_targets"] = bool(figures["raw_to_features_s"] < TARGET_SECONDS
                                        and figures["pipeline_peak_rss_gb"] < TARGET_PEAK_GB)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)

    if not quiet:
        print(f"pipeline: {n:,} jobs, {figures['instances']:,} instances, {figures['raw_csv_mb']:,.0f} MB of raw CSV")
        rows = [("synthesise (child)", figures["synth_s"]), ("write raw CSV (child)", figures["write_csv_s"]),
                ("read raw tables", figures["read_raw_s"]), ("assemble jobs", figures["jobs_s"]),
                ("labels", figures["labels_s"]), ("split", figures["split_s"]),
                ("features", figures["features_s"]), ("write parquet", figures["write_parquet_s"])]
        for name, secs in rows:
            print(f"  {name:<24} {secs:8.1f} s")
        print(f"  raw -> features total    {figures['raw_to_features_s']:8.1f} s  (target < {TARGET_SECONDS:.0f} s)")
        print(f"  peak RSS pipeline        {figures['pipeline_peak_rss_gb']:8.2f} GB (target < {TARGET_PEAK_GB:.0f} GB); "
              f"generator {figures['synth_peak_rss_gb']:.2f} GB")
        print(f"  kept {figures['kept']:,} jobs; targets met: {figures['meets_targets']}")
    return figures
