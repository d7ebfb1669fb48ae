"""Small random SWF logs for the HPC command tests (imported by them; pytest puts this folder on sys.path).

`random_swf` writes an 8-processor log of `n` jobs from seeded uniform draws: gaps between
submits in [0, max_gap), requested times in [20, max_request), run times up to 50 s past the request
(some jobs are killed at it), 1–8 processors, users 1–5. The tests pick the seed and the spacing
(a busier log for shaking, a quieter one elsewhere).
"""

import numpy as np


def random_swf(path, n: int, *, seed: int, max_gap: int, max_request: int):
    """Write the log to `path`; return `path`."""
    rng = np.random.default_rng(seed)
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, max_gap))
        req = int(rng.integers(20, max_request))
        run = int(rng.integers(1, req + 50))
        lines.append(f"{i + 1} {t} 0 {run} {int(rng.integers(1, 9))} -1 -1 -1 {req} -1 1 "
                     f"{int(rng.integers(1, 6))} 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path
