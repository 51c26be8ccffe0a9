"""Help and docs agree: every option a command's --help lists is
documented (README.md or docs/), and every fcbo-dist option the docs name
exists in some --help (options of other tools in the docs -- mpirun,
sbatch, cmake, the bench scripts -- are listed below).  A renamed or
removed option fails here until both sides say the same.

The environment's knobs too: every FD_ variable the sources read is in
the docs (the test hooks, FD_TEST_*, in docs/testing.md), every switch
(common/env.c's table) is a row of performance.md's "Tuning knobs", and
every name passed to fd_env_switched is in that table (another reads as
"not switched", silently).
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

def text(*paths):
    out = ""
    for p in paths:
        with open(os.path.join(SRC, p)) as f:
            out += f.read()
    return out


sources = ""
for p in sorted(glob.glob(os.path.join(SRC, "src", "**", "*.c*"), recursive=True) +
                glob.glob(os.path.join(SRC, "src", "**", "*.h"), recursive=True)):
    with open(p) as f:
        sources += f.read()
read = set(re.findall(r'(?:getenv|fd_env_[a-z]+)\(\s*"(FD_[A-Z0-9_]+)"', sources))
alldocs = "".join(open(p).read() for p in docs if os.path.exists(p))
env_c = text("src/common/env.c")
table = set(re.findall(r'^\s*\{"(FD_[A-Z0-9_]+)", [a-z_]+\}', env_c, re.M))
perf = text("docs/performance.md")
knob_rows = set(re.findall(r"^\| `(FD_[A-Z0-9_]+)` \|", perf, re.M))
knobs = 0
for v in sorted(read):
    where = text("docs/testing.md") if v.startswith("FD_TEST_") else alldocs
    if not re.search(r"\b%s\b" % v, where):
        print("FAIL: the sources read %s, which %s does not mention" %
              (v, "docs/testing.md" if v.startswith("FD_TEST_") else "no doc"))
        fails += 1
for v in sorted(table - knob_rows):
    print("FAIL: switch %s (src/common/env.c) has no row in docs/performance.md's tuning knobs" % v)
    fails += 1
for v in sorted(set(re.findall(r'fd_env_switched\(\s*"(FD_[A-Z0-9_]+)"', sources)) - table):
    print("FAIL: fd_env_switched(\"%s\") names no switch of src/common/env.c's table" % v)
    fails += 1
if len(table) < 10 or len(read) < 20:
    print("FAIL: found %d switches and %d variables read: the patterns no longer match the sources" %
          (len(table), len(read)))
    fails += 1
print("%d switches, %d FD_ variables read" % (len(table), len(read)))
print("%d options in --help, %d in the docs, %d disagreements" % (len(in_help), len(found), fails))
sys.exit(1 if fails else 0)
