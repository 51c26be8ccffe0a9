"""Read fcbo-dist's results into numpy, scipy and pandas; run fcbo-dist.

    >>> import fcbo_dist
    >>> r = fcbo_dist.read("out")          # a result directory or its .h5
    >>> r.workload, r.attrs["command"]

See python/README.md for what each workload's result holds.
"""
from .read import FormatError, read, Lattice, Spearman, Dpc, Bcp, Rules
from .run import RunError, run

__all__ = ["read", "run", "FormatError", "RunError", "Lattice", "Spearman", "Dpc", "Bcp", "Rules"]
__version__ = "0.1.0"
