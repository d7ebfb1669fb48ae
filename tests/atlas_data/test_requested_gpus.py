import numpy as np
import pandas as pd

from atlas_data.build import requested_gpus


def test_requested_gpus_reads_log_gpu_as_whole_gpus():
    # log_gpu = log1p(Σ plan_gpu/100 · instances): 0, half a GPU, 1, 2, 8 and 2.5 GPUs
    frame = pd.DataFrame({"log_gpu": np.log1p([0.0, 0.5, 1.0, 2.0, 8.0, 2.5])})
    assert requested_gpus(frame).tolist() == [1, 1, 1, 2, 8, 3]
    assert requested_gpus(pd.DataFrame({"x": [1, 2]})).tolist() == [1, 1]
