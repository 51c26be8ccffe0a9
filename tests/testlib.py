"""Shared by the Python tests: the environment for mpirun as root, and a
check that counts and reports failures, with finish() for the exit
status; fcbo(), one fcbo-dist command on one rank or several."""
import os
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# The command-line tests: the CPU backend (a GPU machine's auto would take
# the GPU), and more ranks than cores allowed.
CPU_ENV = dict(ENV, FD_BACKEND="cpu", OMPI_MCA_rmaps_base_oversubscribe="1")
counts = {"checks": 0, "failures": 0}


def attrs(obj):
    """An HDF5 object's attributes as a dict, strings as str: fcbo-dist
    stores them fixed-length (docs/formats.md), which h5py reads as bytes."""
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in obj.attrs.items()}


def check(cond, what):
    counts["checks"] += 1
    if not cond:
        counts["failures"] += 1
        print("FAIL:", what, file=sys.stderr)


def finish(fmt="%d checks, %d failed"):
    """Prints the counts and exits non-zero on any failure."""
    print(fmt % (counts["checks"], counts["failures"]))
    sys.exit(1 if counts["failures"] else 0)


def fcbo(binary, *args, ranks=1, env=None):
    """binary with args (each str()'d), under mpirun -np ranks when ranks > 1,
    in env (default CPU_ENV); the CompletedProcess, output as text."""
    cmd = ([binary] if ranks == 1 else ["mpirun", "-np", str(ranks), binary]) + [str(a) for a in args]
    return subprocess.run(cmd, env=env or CPU_ENV, capture_output=True, text=True)


def write_matrix(X, path):
    """X to path as the extension says: .npy, .csv, else whitespace text
    (12 significant digits; NaN as nan)."""
    import numpy as np

    if path.endswith(".npy"):
        np.save(path, X)
    else:
        np.savetxt(path, X, fmt="%.12g", delimiter="," if path.endswith(".csv") else " ")
