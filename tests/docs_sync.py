"""Help and docs agree: every option a command's --help lists is
documented (README.md or docs/), and every fcbo-dist option the docs name
exists in some --help (options of other tools in the docs -- mpirun,
sbatch, cmake, the bench scripts -- are listed below).  A renamed or
removed option fails here until both sides say the same.
usage: docs_sync.py FCBO_DIST SOURCE_DIR"""
import glob
import os
import re
import subprocess
import sys

BIN, SRC = sys.argv[1], sys.argv[2]
COMMANDS = ["lattice", "rules", "spearman", "dpc", "bcp", "gen", "info"]
OPTION = re.compile(r"(?<![\w/-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w])")
# Options of other programs that the docs show in their commands.
OTHERS = {
    "mpirun": {"--bind-to", "--map-by", "--np", "--oversubscribe", "--allow-run-as-root", "--mca", "--host"},
    "srun/sbatch": {"--mpi", "--nodes", "--ntasks-per-node", "--cpus-per-task", "--gpus-per-task", "--export",
                    "--signal", "--requeue", "--parsable", "--time", "--ntasks", "--gres", "--partition"},
    "cmake/ctest/pip": {"--build", "--install", "--prefix", "--test-dir", "--output-on-failure", "--target",
                        "--break-system-packages", "--no-deps", "--config"},
    "bench and tools scripts": {"--backends", "--cmd", "--load", "--record", "--seconds", "--thread", "--sizes",
                                "--sels", "--cols", "--base", "--change", "--reps", "--runs", "--input", "--peer",
                                "--modes", "--ranks", "--threads-list", "--sets", "--no-cpu", "--breakdown", "--passes",
                                "--ab", "--shapes", "--only", "--replace"},
}
others = set().union(*OTHERS.values())

helps = {}
for c in COMMANDS:
    out = subprocess.run([BIN, c, "--help"], capture_output=True, text=True)
    helps[c] = set(OPTION.findall(out.stdout))
in_help = set().union(*helps.values())

docs = [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md"))) + \
    [os.path.join(SRC, "jobs", "README.md"), os.path.join(SRC, "python", "README.md")]
found = {}
for path in docs:
    if not os.path.exists(path):
        continue
    with open(path) as f:
        for n, line in enumerate(f, 1):
            for opt in OPTION.findall(line):
                found.setdefault(opt, "%s:%d" % (os.path.relpath(path, SRC), n))

fails = 0
for opt, where in sorted(found.items()):
    if opt not in in_help and opt not in others:
        print("FAIL: %s names %s, which no fcbo-dist --help lists" % (where, opt))
        fails += 1
# -o is how the docs write --output.
for c in COMMANDS:
    for opt in sorted(helps[c] - set(found) - {"--output", "--help"}):
        print("FAIL: fcbo-dist %s --help lists %s, which neither README.md nor docs/ mention" % (c, opt))
        fails += 1
print("%d options in --help, %d in the docs, %d disagreements" % (len(in_help), len(found), fails))
sys.exit(1 if fails else 0)
