"""The built-in cluster policies, one module per policy (family); importing this package registers them.

Registration order is the order of the default policy list and of every results table.
"""

from schedulers.cluster.policies import fifo, srtf_oracle, yarn_cs, tiresias_l, themis  # noqa: F401  (order matters)
from schedulers.cluster.policies import gandiva_fair, hived, astraea, allox  # noqa: F401
