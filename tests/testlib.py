"""Shared by the Python tests: the environment for mpirun as root, and a
check that counts and reports failures, with finish() for the exit
status."""
import os
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
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
