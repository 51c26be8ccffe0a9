"""fcbo_dist.run: the fcbo-dist binary as a Python call."""
import os
import shutil
import subprocess

from .read import WORKLOADS, read


class RunError(RuntimeError):
    """fcbo-dist exited with a non-zero status; .returncode and .stderr say why."""

    def __init__(self, argv, returncode, stderr):
        self.argv, self.returncode, self.stderr = argv, returncode, stderr
        super().__init__("%s: exit status %d\n%s" % (" ".join(argv), returncode, stderr.strip()))


def binary():
    """The fcbo-dist to run: $FCBO_DIST, else the one on the PATH."""
    exe = os.environ.get("FCBO_DIST") or shutil.which("fcbo-dist")
    if not exe:
        raise RunError(["fcbo-dist"], 127, "fcbo-dist not found: put it on the PATH or set FCBO_DIST")
    return exe


def options(opts):
    """Keywords as command-line options: output="d" -> --output d, extents=True -> --extents,
    False or None -> left out; underscores become dashes."""
    argv = []
    for key, value in opts.items():
        if value is None or value is False:
            continue
        argv.append("--" + key.replace("_", "-"))
        if value is not True:
            argv.append(str(value))
    return argv


def run(command, *args, mpirun=None, **opts):
    """Runs `fcbo-dist COMMAND ARGS... OPTIONS...` and returns read(output)
    when the command writes a result (output=DIR given), else the
    subprocess.CompletedProcess.  mpirun=N runs it under `mpirun -np N`.
    Raises RunError with fcbo-dist's message when it fails."""
    argv = [binary(), command] + [str(a) for a in args] + options(opts)
    if mpirun:
        argv = ["mpirun", "-np", str(int(mpirun))] + argv
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RunError(argv, done.returncode, done.stderr)
    out = opts.get("output")
    if command in WORKLOADS and out and os.path.isfile(os.path.join(str(out), command + ".h5")):
        return read(out, workload=command)
    return done
