"""The built-in cluster policies, one module per policy (family); importing this package registers them.

The order of the default policy list and of every results table is schedulers.policy.BUILTIN_ORDER,
not the order of the imports below.
"""

from schedulers.cluster.policies import fifo, srtf_oracle, yarn_cs, tiresias_l, themis  # noqa: F401
from schedulers.cluster.policies import gandiva_fair, hived, astraea, allox, qssf, easy_p  # noqa: F401
