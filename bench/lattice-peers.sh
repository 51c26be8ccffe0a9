#!/usr/bin/env bash
# fcbo-dist lattice side by side with the closed-itemset miners that are
# installed, on the same inputs and supports, one thread (fcbo-dist with
# --backend cpu: auto would take a GPU for these inputs): LCM (Uno's
# `lcm`, closed mode `C`), Borgelt's `fpgrowth` and `eclat` (target
# closed, `-tc`), each found on the PATH or named by --lcm/--fpgrowth/
# --eclat PATH; a peer that is absent is reported as such, never guessed.
# Inputs: T10I4D100K, mushroom and chess (from ../shared when present) and
# a sparse basket-like context (`gen context --zipf`, 100,000 x 16,000 at
# density 0.0006).  Wall seconds (median of --reps) and peak RSS of each
# whole command, the concept count (closed sets; fcbo-dist counts the
# empty intent's concept too, so it may be one more), and the ratio
# peer / fcbo-dist.  Appends to bench/results/lattice-peers.csv.
#
#   bench/lattice-peers.sh [--reps 3] [--bin PATH] [--shared DIR] [--lcm PATH]
#                          [--fpgrowth PATH] [--eclat PATH] [--csv FILE] [--machine NAME]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; REPS=3; SHARED=$here/../../shared; CSV=$here/results/lattice-peers.csv
LCM=$(command -v lcm || true); FPG=$(command -v fpgrowth || true); ECL=$(command -v eclat || true)
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,16 "--reps=REPS --bin=BIN --shared=SHARED --csv=CSV --lcm=LCM --fpgrowth=FPG --eclat=ECL --machine=MACHINE" "$@"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-peers.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
"$BIN" gen context --objects 100000 --attributes 16000 --density 0.0006 --zipf 1 --seed 1 -o "$tmp/zipf.dat" > /dev/null
# input|absolute supports (transactions)|name
cases=("$tmp/zipf.dat|20 5 1|zipf 100000x16000 d=0.0006")
[ -f "$SHARED/data/fca/T10I4D100K.dat" ] && cases+=("$SHARED/data/fca/T10I4D100K.dat|20 5 1|T10I4D100K")
[ -f "$SHARED/data/fca/mushroom.dat" ] && cases+=("$SHARED/data/fca/mushroom.dat|1|mushroom")
[ -f "$SHARED/data/fca/chess.dat" ] && cases+=("$SHARED/data/fca/chess.dat|1918|chess")
[ -f "$CSV" ] || echo "input,min_support,tool,concepts,seconds,peak_rss_mb,ratio_to_fcbo,machine,date,version" > "$CSV"
echo "peers: lcm ${LCM:-absent}, fpgrowth ${FPG:-absent}, eclat ${ECL:-absent}"

# time_cmd OUTFILE CMD...: median wall seconds and the last run's peak RSS (MB) into WALL and RSS.
time_cmd() {
  local out=$1; shift; local ts=()
  for _ in $(seq "$REPS"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > "$out" 2> "$tmp/err" || { WALL=; return 1; }
    ts+=("$(cut -d' ' -f1 "$tmp/time")")
  done
  WALL=$(printf '%s\n' "${ts[@]}" | sort -g | sed -n "$(( (REPS + 1) / 2 ))p")
  RSS=$(awk '{print int($2 / 1024)}' "$tmp/time")
}
row() { echo "\"$1\",$2,$3,$4,$5,$6,$7,\"$MACHINE\",$(date +%F),\"$version\"" | tee -a "$CSV"; }

for c in "${cases[@]}"; do
  IFS='|' read -r file sups name <<< "$c"
  for s in $sups; do
    time_cmd "$tmp/fd.txt" "$BIN" lattice "$file" --min-support "$s" -t 1 --backend cpu --text || { echo "fcbo-dist failed: $(cat "$tmp/err")"; continue; }
    fd=$WALL; row "$name" "$s" fcbo-dist "$(wc -l < "$tmp/fd.txt")" "$fd" "$RSS" 1
    if [ -n "$LCM" ]; then
      time_cmd "$tmp/lcm.txt" "$LCM" C "$file" "$s" "$tmp/lcm.out" &&
        row "$name" "$s" lcm "$(wc -l < "$tmp/lcm.out")" "$WALL" "$RSS" "$(awk -v a="$WALL" -v b="$fd" 'BEGIN { printf "%.3f", a / b }')"
    fi
    for peer in "fpgrowth:$FPG" "eclat:$ECL"; do
      tool=${peer%%:*} exe=${peer#*:}
      [ -n "$exe" ] || continue
      time_cmd "$tmp/$tool.txt" "$exe" -tc -s-"$s" "$file" "$tmp/$tool.out" &&
        row "$name" "$s" "$tool" "$(wc -l < "$tmp/$tool.out")" "$WALL" "$RSS" "$(awk -v a="$WALL" -v b="$fd" 'BEGIN { printf "%.3f", a / b }')"
    done
  done
done
