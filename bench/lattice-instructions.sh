#!/usr/bin/env bash
# Instructions, not seconds: `fcbo-dist lattice` under valgrind's
# callgrind (one thread, --backend cpu, intents as text), for each binary
# of --bin LABEL=PATH (repeatable: builds of older commits beside this
# one, e.g. bench/ab.sh's worktrees; default this build's), on mushroom
# (support 1) and T10I4D100K (support 5) from ../shared.  The count of a
# run is the same from one run to the next, where the 2-core VM's wall
# times move by 10-20 % within an hour: it is how changes of a few per
# cent to the search are told apart there (the wall clock, bench/ab.sh,
# stays the measure users feel).  Prints the total and the three largest
# functions; appends the totals to bench/results/lattice-instructions.csv.
#
#   bench/lattice-instructions.sh [--bin LABEL=PATH]... [--shared DIR] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BINS=(); SHARED=$here/../../shared; CSV=$here/results/lattice-instructions.csv
bench_options 2,13 "--bin=BINS+ --shared=SHARED --csv=CSV" "$@"
[ ${#BINS[@]} -gt 0 ] || BINS=("this=$here/../build/fcbo-dist")
command -v valgrind > /dev/null || { echo "bench/lattice-instructions.sh: needs valgrind" >&2; exit 2; }
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$CSV" ] || echo "input,min_support,label,instructions,machine,date,version" > "$CSV"
# input name|file|support
cases=("mushroom|$SHARED/data/fca/mushroom.dat|1" "T10I4D100K|$SHARED/data/fca/T10I4D100K.dat|5")
for c in "${cases[@]}"; do
  IFS='|' read -r name file s <<< "$c"
  [ -f "$file" ] || { echo "bench/lattice-instructions.sh: $file is absent: $name left out" >&2; continue; }
  for b in "${BINS[@]}"; do
    label=${b%%=*} bin=${b#*=}
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" lattice "$file" --min-support "$s" -t 1 \
      --backend cpu --text > /dev/null 2> "$tmp/err" || { tail -3 "$tmp/err" >&2; continue; }
    total=$(callgrind_annotate "$tmp/cg" 2> /dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
    echo "# $name, support $s, $label: the largest functions"
    callgrind_annotate "$tmp/cg" 2> /dev/null | grep -E "^ *[0-9,]+ \([ 0-9.]+%\) " | grep -v TOTALS | head -3
    echo "$name,$s,$label,$total,\"$MACHINE\",$(date +%F),$(bin_version "$bin")" | tee -a "$CSV"
  done
done
