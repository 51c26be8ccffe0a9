# Help and docs name the same options (tests/docs_sync.py).
source "$(dirname "$0")/lib.sh" "$@"
if python3 "$(dirname "$0")/docs_sync.py" "$BIN" "$(cd "$(dirname "$0")/.." && pwd)" > "$WORK/out" 2>&1; then ok
else cat "$WORK/out"; bad "help and docs disagree"; fi
tail -1 "$WORK/out"
finish
