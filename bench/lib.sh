# Shared by the bench scripts: source "$(dirname "$0")/lib.sh".

# Median of the numbers on standard input, one per line.
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# "objects attributes density" of a context file (.cxt, or FIMI .dat
# whose attribute count is its number of distinct ids).
context_shape() {
  if [[ $1 == *.cxt ]]; then
    awk 'NR==3{n=$1} NR==4{m=$1} NR>5+n+m{e+=gsub(/X/,"")} END{printf "%d %d %.4f", n, m, e/(n*m)}' "$1"
  else
    awk '{n++; e+=NF; for(i=1;i<=NF;i++) if(!($i in s)){s[$i]=1; m++}} END{printf "%d %d %.4f", n, m, e/(n*m)}' "$1"
  fi
}

# A stand-alone .cu of bench/ built into OUT: build_cu SRC OUT [nvcc
# options...], with the nvcc on PATH or the toolkit's in /usr/local/cuda.
build_cu() {
  local src=$1 out=$2 nvcc
  shift 2
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -std=c++17 "$@" "$src" -o "$out"
}

# A stand-alone CUDA program of bench/ built in a scratch directory and
# run, after a line with the GPU's name and the date:
# run_cu SRC NVCC_ARGS...; status 1 if it does not build, else its own.
run_cu() {
  local src=$1 dir st
  shift
  dir=$(mktemp -d)
  build_cu "$src" "$dir/prog" "$@" || { rm -rf "$dir"; return 1; }
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"
  "$dir/prog"
  st=$?
  rm -rf "$dir"
  return $st
}

# The `fcbo-dist spearman` options of a bench mode into the array
# SPEARMAN_ARGS, the modes that write writing into OUT:
# spearman_mode_args MODE OUT; status 1 for an unknown mode.  The modes:
# count-only (p <= 0.05), count-only-p1e-12, count-only-fdr (--fdr 0.05:
# pass 1 bins every pair with p <= 0.05 by x, then the cutoff's collecting
# pass), p1e-12 and p1e-12-nohist (-o OUT) and top-k10 (--top-k 10 -o OUT).
spearman_mode_args() {
  case $1 in
    count-only) SPEARMAN_ARGS=(--count-only);;
    count-only-p1e-12) SPEARMAN_ARGS=(--count-only --pvalue 1e-12);;
    count-only-fdr) SPEARMAN_ARGS=(--count-only --fdr 0.05);;
    p1e-12) SPEARMAN_ARGS=(--pvalue 1e-12 -o "$2" --force);;
    p1e-12-nohist) SPEARMAN_ARGS=(--pvalue 1e-12 --no-histogram -o "$2" --force);;
    top-k10) SPEARMAN_ARGS=(--top-k 10 -o "$2" --force);;
    *) return 1;;
  esac
}

# A results CSV that rows are appended to: csv_open FILE HEADER makes it
# with HEADER, or ends the script (exit 2) when it has another header (a
# file of an older layout).
csv_open() {
  [ -f "$1" ] || echo "$2" > "$1"
  [ "$(head -1 "$1")" = "$2" ] ||
    { echo "bench/$(basename "${BASH_SOURCE[1]}"): $1: its header is not '$2' (a file of an older layout: name another --csv)" >&2; exit 2; }
}

# GPU (the first one's name), NGPU (how many) and MACHINE ("N cores CPU,
# NGPU x GPU") of this machine, for the GPU bench scripts' rows.
gpu_machine() {
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1 || true)
  NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  MACHINE="$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1), ${NGPU:-0} x ${GPU:-no GPU}"
}

# The times of FILE's `fcbo-dist spearman --stats` line ("load L s, pass 1
# (count) P s, [FDR cutoff F s, ]pass 2 (write) W s"): "L P R", R the sum
# of the times after pass 1; nothing when FILE has no such line.
spearman_stats_times() {
  awk '/^load [0-9.]* s, pass 1/ { n = 0; r = 0
      for (i = 1; i < NF; i++) if ($(i + 1) ~ /^s,?$/) { if (++n == 1) l = $i; else if (n == 2) p = $i; else r += $i }
      printf "%s %s %.3f\n", l, p, r }' "$1"
}

# The options of a bench script, parsed once here rather than by a loop
# in each: bench_options HELP SPEC "$@", where HELP is the sed range of
# the calling script's header that --help prints (e.g. 2,9) and SPEC
# words say what each option does:
#   --name=VAR        VAR takes the next argument
#   --name=VAR+       the next argument is appended to the array VAR
#   --name=VAR!       VAR=1 (a flag); --name=VAR!VALUE sets VALUE
#   ARGS=ARRAY        arguments that are not options are appended to ARRAY
# Anything else ends the script with exit 2 and "bench/NAME: unknown
# option X" (or "X needs a value"), before any work.
bench_options() {
  local help=$1 spec=$2 script=${BASH_SOURCE[1]} w opt var found rest=""
  local name=bench/$(basename "$script")
  shift 2
  for w in $spec; do [[ $w == ARGS=* ]] && rest=${w#ARGS=}; done
  while [ $# -gt 0 ]; do
    case $1 in -h|--help) sed -n "${help}p" "$script"; exit 0;; esac
    found=""
    for w in $spec; do
      opt=${w%%=*} var=${w#*=}
      [ "$1" = "$opt" ] || continue
      found=1
      case $var in
        *!*) printf -v "${var%%!*}" '%s' "${var#*!}"; [ -n "${var#*!}" ] || printf -v "${var%%!*}" 1; shift;;
        *)
          [ $# -ge 2 ] || { echo "$name: $1 needs a value" >&2; exit 2; }
          if [[ $var == *+ ]]; then
            local -n bench_arr=${var%+}
            bench_arr+=("$2")
            unset -n bench_arr
          else
            printf -v "$var" '%s' "$2"
          fi
          shift 2;;
      esac
      break
    done
    [ -n "$found" ] && continue
    if [ -n "$rest" ] && [[ $1 != -* ]]; then
      local -n bench_rest=$rest
      bench_rest+=("$1")
      unset -n bench_rest
      shift
      continue
    fi
    echo "$name: unknown option $1" >&2
    exit 2
  done
}

# The phases of a `fcbo-dist dpc` result, from its attributes:
# "load,dc,rho,delta,assign,clusters,ari" (seconds to the millisecond).
dpc_phases() {
  python3 - "$1" << 'PY'
import sys, h5py
a = h5py.File(sys.argv[1]).attrs
print("%.3f,%.3f,%.3f,%.3f,%.3f,%d,%.4f" % (a["load_seconds"], a["dc_seconds"], a["rho_seconds"], a["delta_seconds"],
                                           a["assign_seconds"], a["n_clusters"], a["ari"]))
PY
}

# "0.1.0+COMMIT" of a binary, from the first line of `BIN version`.
bin_version() {
  "$1" version | head -1 | sed -E 's/^[^ ]+ ([^ ]+)( \(commit ([^)]*)\))?.*/\1+\3/; s/\+$//'
}
