"""The reference prediction methods: p̂ read from the true sizes (`oracle`, p̂ = p), nothing fitted.

A module of its own, importing nothing: the MLflow logging of every run (benchmark.tracking) asks
whether a row read the true sizes, and `predictors.methods` imports scikit-learn (about a second of a
core, more than the rest of a small scheduling run). `predictors.methods` registers these names.

May import nothing.
"""

REFERENCE_METHODS = ("oracle",)
