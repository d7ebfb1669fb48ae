"""The built-in single-machine and parallel-machine policies, one module per policy family.

Every module of this package is a policy module: schedulers.policy discovers them (imports each,
and each registers its classes with schedulers.policy_base.register), so this file imports nothing;
a new module here is found without being listed. The order of every listing is each class's `listing_rank`.
"""
