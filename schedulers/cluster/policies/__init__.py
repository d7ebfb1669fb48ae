"""The built-in cluster policies, one module per policy (family): its registered class and its kernel.

Every module of this package is imported by schedulers.policy's discovery, and registers its own
policies (schedulers.policy_base.register) and kernels (schedulers.cluster.kernels.kernel), so this file
imports nothing: a new policy is one more file here. The order of the default policy list and of
every results table is each class's `listing_rank`, then its name. (hpc_queue and conservative register
kernels for the HPC commands, and no policy.)
"""
