# README.md is pasteable: every ```sh block runs, top to bottom, in one
# fresh directory with fcbo-dist on the PATH, and every ```python block
# with the package of python/ importable; blocks whose fence follows a
# "<!-- needs: ... -->" line (a GPU, SLURM, a cluster) are left out.  A
# failing command fails the test with its block and line.
source "$(dirname "$0")/lib.sh" "$@"
readme=$(cd "$(dirname "$0")/.." && pwd)/README.md
pkg=$(cd "$(dirname "$0")/../python" && pwd)
mkdir -p "$WORK/bin" "$WORK/run"
ln -sf "$BIN" "$WORK/bin/fcbo-dist"
# Blocks to files: block-NN.sh / block-NN.py, with the README line they start on.
python3 - "$readme" "$WORK" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
k, i, prev = 0, 0, ""
while i < len(lines):
    m = re.match(r"^```(sh|python)\s*$", lines[i])
    if m:
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        if not prev.startswith("<!-- needs:"):
            k += 1
            ext = "sh" if m.group(1) == "sh" else "py"
            with open("%s/block-%02d.%s" % (sys.argv[2], k, ext), "w") as f:
                f.write("# README.md line %d\n" % (i + 2) + "\n".join(lines[i + 1:j]) + "\n")
        i = j
    if lines[i].strip():
        prev = lines[i].strip()
    i += 1
PY
check '[ "$(ls "$WORK"/block-*.sh | wc -l)" -ge 4 ]' "README: $(ls "$WORK"/block-* | wc -l) runnable blocks"
if ! python3 -c "import numpy, h5py, scipy" 2> /dev/null; then
  python3 -m pip install -q numpy h5py scipy > "$WORK/pip.log" 2>&1 ||
    python3 -m pip install -q --break-system-packages numpy h5py scipy >> "$WORK/pip.log" 2>&1 || true
fi
cd "$WORK/run"
for b in "$WORK"/block-*; do
  start=$(head -1 "$b" | grep -o '[0-9]*$')
  case "$b" in
  *.sh)
    # Each command on its own, so that a failure names its line.  A
    # pipeline into head ends its writer by SIGPIPE, as in a terminal: its
    # status is the last command's, and any error message fails it.
    n=0
    while IFS= read -r cmd; do
      n=$((n + 1))
      case "$cmd" in ''|'#'*) continue ;; esac
      if ! PATH="$WORK/bin:$PATH" bash -c "$cmd" > "$WORK/out" 2>&1 < /dev/null || grep -q "error:" "$WORK/out"; then
        bad "README.md:$((start + n - 2)): $cmd: $(tail -3 "$WORK/out")"
      else ok; fi
    done < "$b" ;;
  *.py)
    if PYTHONPATH="$pkg" python3 "$b" > "$WORK/out" 2>&1; then ok
    else bad "README.md:$start: the python block: $(tail -5 "$WORK/out")"; fi ;;
  esac
done
finish
