"""A scheduling run's per-job table (`per_job.parquet`) written run by run, never held whole.

At 10⁶ jobs the sixteen default policies give 16 million rows: 1 GiB as one frame, and writing it
and drawing its figure each held another copy. `PerJobTable` is the sink of
`schedulers.objectives.Watch.per_job`: it writes each run's rows as a row group of the file as soon
as the run is scored, and keeps of them only what the stretch CDF figure draws (each series'
`plots.cdf_steps`, a few thousand points). The file holds what `frame.to_parquet(path,
index=False)` of the whole frame held (the same schema, pandas metadata and rows; only the row
groups are cut elsewhere). It is written inside the run's temporary output folder
(atlas_data.outputs.output_folder), so an interrupted run leaves no part of it.

May import numpy/pandas/pyarrow, schedulers and benchmark.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from benchmark.value import is_control


class PerJobTable:
    """`path` written a frame at a time: `start(template)` fixes the schema (the frame's columns and
    types: `schedulers.objectives.per_job_template`, or the whole frame), then `write(frame)` appends
    rows; `close()` (or the end of a `with` block) ends the file.

    With `cdf=True`, `series` collects ((policy, predictor), cdf steps of stretch) of each series the
    stretch CDF draws (not the controls of --controls), in the order of the series' first rows; a
    series must come whole in one `write`. `write_s` and `figure_s` are the seconds spent writing
    and taking the figure's steps; `most_rows` the most rows one `write` was given."""

    def __init__(self, path: Path | str, *, cdf: bool):
        self.path = Path(path)
        self.cdf = cdf
        self.series: list[tuple[tuple, tuple]] = []
        self.write_s = 0.0
        self.figure_s = 0.0
        self.most_rows = 0
        self._schema = None
        self._writer = None

    def __enter__(self) -> PerJobTable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self, template: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        t0 = time.perf_counter()
        self._schema = pa.Table.from_pandas(template, preserve_index=False).schema
        # the options of pandas' to_parquet (pyarrow's defaults: snappy, format 2.6, statistics)
        self._writer = pq.ParquetWriter(self.path, self._schema)
        self.write_s += time.perf_counter() - t0

    def write(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa

        if self._writer is None:
            raise RuntimeError("PerJobTable.write before start")
        t0 = time.perf_counter()
        self._writer.write_table(pa.Table.from_pandas(frame, schema=self._schema, preserve_index=False))
        t1 = time.perf_counter()
        self.write_s += t1 - t0
        self.most_rows = max(self.most_rows, len(frame))
        if self.cdf:
            self._take_series(frame)
            self.figure_s += time.perf_counter() - t1

    def _take_series(self, frame: pd.DataFrame) -> None:
        from benchmark.plots import series_cdf_steps

        seen = {key for key, _ in self.series}
        for key, steps in series_cdf_steps(frame, "stretch"):
            if is_control(key[1]):
                continue
            if key in seen:  # its steps would need every row of both writes
                raise ValueError(f"series {key} of the per-job table came in two parts")
            self.series.append((key, steps))

    def close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            t0 = time.perf_counter()
            writer.close()
            self.write_s += time.perf_counter() - t0
