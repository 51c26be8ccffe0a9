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
