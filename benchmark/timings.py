"""Where a command's time goes: named stages with wall seconds, and the process's peak memory.

`Timings` collects stages (`with timings.stage("read"): ...` or `timings.add(name, seconds)`);
`as_dict()` is the `timings` object of results.json (docs/results-and-tracking.md) and `render()`
the table `--profile` prints; `cpu_seconds` the CPU time spent so far. Peak memory is the process's peak resident set size so far
(getrusage), which is what a machine's memory limit sees. May import the standard library only.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process so far (or since `reset_peak_rss`), in MiB.

    Linux's VmHWM where there is one, else getrusage's ru_maxrss; None where neither exists.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0  # bytes on macOS, KiB on Linux


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of the children it has waited for (0.0 where
    getrusage does not exist)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0.0
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def reset_peak_rss() -> bool:
    """Start a new peak-memory measurement at the current resident size (Linux); False if unsupported,
    in which case `peak_rss_mib` keeps reporting the process's peak since it started."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")  # 5: reset the peak RSS (proc(5), since Linux 4.0)
        return True
    except OSError:
        return False


class Timings:
    """Stages in the order they ran; `policies` holds one entry per simulated policy run."""

    def __init__(self):
        self._start = time.perf_counter()
        self.stages: dict[str, float] = {}
        self.policies: dict[str, float] = {}
        self.peak_after: dict[str, float | None] = {}  # peak memory when each stage ended: which one raised it
        self.fast_loops: str | None = None  # which single-machine loops ran (schedulers.jit.describe)

    @contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.stages[name] = self.stages.get(name, 0.0) + float(seconds)
        peak = peak_rss_mib()
        self.peak_after[name] = None if peak is None else round(peak, 1)

    def as_dict(self) -> dict:
        """{"stages_s", "policies_s", "total_s", "peak_rss_mib", "peak_rss_mib_after"[, "fast_loops"]}
        (docs/results-and-tracking.md)."""
        peak = peak_rss_mib()
        extra = {} if self.fast_loops is None else {"fast_loops": self.fast_loops}
        return {
            "stages_s": {k: round(v, 4) for k, v in self.stages.items()},
            "policies_s": {k: round(v, 4) for k, v in self.policies.items()},
            "total_s": round(time.perf_counter() - self._start, 4),
            "peak_rss_mib": None if peak is None else round(peak, 1),
            "peak_rss_mib_after": dict(self.peak_after),
            **extra,
        }


def render(timings: dict, extra: dict[str, float] | None = None) -> str:
    """A `timings` object (and stages run after it was recorded, e.g. tracking) as a small table."""
    total = timings["total_s"] + sum((extra or {}).values())
    lines = ["where the time went (wall seconds):"]

    def line(name: str, seconds: float, indent: str = "  ", peak: float | None = None) -> None:
        share = 100.0 * seconds / total if total > 0 else 0.0
        memory = f"   peak {peak:6.0f} MiB so far" if peak is not None else ""
        lines.append(f"{indent}{name:<34s} {seconds:9.3f} s {share:5.1f} %{memory}")

    for name, seconds in timings["stages_s"].items():
        line(name, seconds, peak=(timings.get("peak_rss_mib_after") or {}).get(name))
        if name == "policies":
            for policy, s in timings["policies_s"].items():
                line(policy, s, indent="      ")
    for name, seconds in (extra or {}).items():
        line(name, seconds)
    lines.append(f"  {'total':<34s} {total:9.3f} s")
    if timings.get("peak_rss_mib") is not None:
        lines.append(f"  peak memory (resident) {timings['peak_rss_mib']:.0f} MiB")
    if timings.get("fast_loops"):
        lines.append(f"  single-machine loops: {timings['fast_loops']}")
    return "\n".join(lines)
