import atlas_data.blas  # noqa: F401 -- first: pins OpenBLAS's kernels before numpy loads (atlas_data/blas.py)
