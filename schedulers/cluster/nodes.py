"""The GPU cluster's real node lists (docs/fairness.md). Where a job goes on them (the placement
rule) is schedulers.cluster.placement.

`node_capacities(kind)` reads the real node lists shipped with `atlas_data`
(openb v2023 GPU nodes, PAI-2020 machine spec). May import numpy, pandas and atlas_data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from atlas_data.errors import InputError

_RESOURCES = Path(__file__).resolve().parents[2] / "atlas_data" / "resources"
NODE_LISTS = {
    "openb": _RESOURCES / "openb" / "openb_node_list_gpu_node.csv",
    "pai": _RESOURCES / "pai_machine_spec.csv",
}


def node_capacities(kind: str) -> np.ndarray:
    """GPUs per node of a real cluster: `openb` (v2023 GPU nodes, 1,213 nodes) or `pai` (PAI-2020
    machine spec, GPU machines only). Nodes without GPUs are left out."""
    import pandas as pd

    if kind not in NODE_LISTS:
        raise InputError(f"unknown node list {kind!r} (choose none, {', '.join(NODE_LISTS)})", where="--node-list")
    path = NODE_LISTS[kind]
    if not path.is_file():
        raise InputError(
            "node list missing from this installation (reinstall atlas-bench, or pass --node-list none)", path=str(path), where="--node-list"
        )
    column = "gpu" if kind == "openb" else "cap_gpu"
    frame = pd.read_csv(path)
    if column not in frame.columns:
        raise InputError("node list has no GPU column", path=str(path), where=f"column '{column}'")
    gpus = pd.to_numeric(frame[column], errors="coerce").fillna(0).to_numpy(np.int64)
    return gpus[gpus > 0]
