# Every bench script answers --help (exit 0, its header) and refuses an
# option it does not know (exit 2, naming itself and the option) before
# doing any work, as the tool's own commands do; a bad --cols likewise.
source "$(dirname "$0")/lib.sh" "$@"
n=0
for f in "$(dirname "$0")"/../bench/*.sh; do
  name=bench/$(basename "$f")
  [ "$name" = bench/lib.sh ] && continue
  n=$((n + 1))
  timeout 20 bash "$f" --help > "$WORK/help" 2> "$WORK/err"; rc=$?
  check '[ $rc -eq 0 ] && grep -q "^# " "$WORK/help"' "$name --help: exit $rc: $(head -2 "$WORK/help") $(cat "$WORK/err")"
  timeout 20 bash "$f" --no-such-option > /dev/null 2> "$WORK/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "^$name: unknown option --no-such-option" "$WORK/err"' \
        "$name --no-such-option: exit $rc: $(cat "$WORK/err")"
done
check '[ $n -ge 20 ]' "only $n bench scripts found"
# An option without its value (bench_options in bench/lib.sh).
timeout 20 bash "$(dirname "$0")"/../bench/dpc-dims.sh --n > /dev/null 2> "$WORK/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "^bench/dpc-dims.sh: --n needs a value" "$WORK/err"' "dpc-dims.sh --n: exit $rc: $(cat "$WORK/err")"
# A bad --cols is refused before any work (exit 2, naming the option).
for cmd in "gpu-spearman-sanitizer.sh --cols x" "gpu-spearman-ab.sh --variant a=. --cols 1"; do
  # shellcheck disable=SC2086
  timeout 20 bash "$(dirname "$0")"/../bench/$cmd > /dev/null 2> "$WORK/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "--cols wants a count" "$WORK/err"' "bench/$cmd: exit $rc: $(cat "$WORK/err")"
done
finish
