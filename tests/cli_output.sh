# The result file: complete, readable by h5dump and by `info`, equal to the
# --text stream; existing directories refused without --force; no
# temporary files left.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
"$BIN" gen context --objects 200 --attributes 14 --density 0.4 --seed 9 -o "$W/c.cxt"
"$BIN" lattice "$W/c.cxt" -o "$W/out" --extents --text -q > "$W/text"; rc=$?
check '[ $rc -eq 0 ] && [ -f "$W/out/lattice.h5" ]' "lattice -o: exit $rc"
check '[ -z "$(ls "$W/out" | grep -v "^lattice.h5$")" ]' "stray files in the output directory: $(ls "$W/out")"
"$ORACLE" "$W/c.cxt" > "$W/want"
check 'same_set "$W/text" "$W/want"' "--text differs from brute force"
"$BIN" info "$W/out/lattice.h5" > "$W/info"
n=$(wc -l < "$W/want")
check 'grep -qE "^n_concepts +$n$" "$W/info"' "info does not say $n concepts: $(cat "$W/info")"
check 'grep -qE "^complete +1$" "$W/info"' "info does not say complete"
check 'grep -qE "^input_sha256 +$(sha256sum "$W/c.cxt" | cut -c1-64)$" "$W/info"' "input_sha256 differs from sha256sum"
"$BIN" info --text "$W/out/lattice.h5" > "$W/back"
check 'same_set "$W/back" "$W/want"' "info --text differs from the run's --text"
if command -v h5dump > /dev/null; then
  h5dump -H "$W/out/lattice.h5" > "$W/dump" 2>&1
  for d in '"offsets"' '"ids"' '"supports"' '"names"' 'GROUP "extents"' 'GROUP "intents"'; do
    check 'grep -q "$d" "$W/dump"' "h5dump does not show $d"
  done
  # Supports, by h5dump, against the extent sizes in the same file.
  values() { h5dump -d "$1" -y -w 0 "$W/out/lattice.h5" | sed -n '/DATA {/,/}/p' | tr ',' '\n' | tr -d ' ' | grep -E '^[0-9]+$'; }
  values /supports > "$W/supp"
  values /extents/offsets | awk 'NR>1{print $1-p} {p=$1}' > "$W/esz"
  check 'cmp -s "$W/supp" "$W/esz" && [ $(wc -l < "$W/supp") -eq $n ]' "supports differ from extent sizes"
fi
if python3 -c "import h5py" 2> /dev/null; then
  python3 "$(dirname "$0")/check_lattice_h5.py" "$W/out/lattice.h5" "$W/c.cxt" && ok || bad "h5py check"
fi
"$BIN" lattice "$W/c.cxt" -o "$W/out" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "exists; use --force" "$W/err"' "existing directory not refused: exit $rc"
"$BIN" lattice "$W/c.cxt" -o "$W/out" -q --force; rc=$?
check '[ $rc -eq 0 ] && [ -z "$(ls "$W/out" | grep -v "^lattice.h5$")" ]' "--force failed or left files"
# Quiet means quiet; without a terminal there is no progress line either.
"$BIN" lattice "$W/c.cxt" -q --text > /dev/null 2> "$W/err"
check '[ ! -s "$W/err" ]' "-q printed: $(cat "$W/err")"
"$BIN" lattice "$W/c.cxt" --text > /dev/null 2> "$W/err"
check '[ $(wc -l < "$W/err") -eq 1 ] && grep -q "concepts in" "$W/err"' "summary line: $(cat "$W/err")"
# An output directory that cannot be created: exit non-zero, message.
"$BIN" lattice "$W/c.cxt" -o /proc/nonexistent/out -q 2> "$W/err"; rc=$?
check '[ $rc -ne 0 ] && grep -q "cannot create the output directory" "$W/err"' "unwritable output: exit $rc"
finish
