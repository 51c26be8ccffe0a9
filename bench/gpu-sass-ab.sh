#!/usr/bin/env bash
# Is a change to a CUDA file free?  Compiles FILE.cu as it is in --base REV
# (a git worktree) and as it is in the working tree, for one architecture,
# with the build's flags, and compares each kernel's machine code (the
# cubin's .text section, hashed) and ptxas's registers and spills.  Where
# every kernel's code is byte for byte the same, the change (a split into
# inlined steps, comments, names) cannot change a result or a time, and
# needs no run on a GPU; where it differs, the sizes and registers say how
# much, and bench/gpu-spearman-ab.sh (or the workload's A/B) on a GPU
# decides.  Needs nvcc, not a GPU.  Takes a minute or two per file.
#
#   bench/gpu-sass-ab.sh --base REV [--arch 90] FILE.cu ...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
root=$(cd "$here/.." && pwd)
BASE=; ARCH=90; FILES=()
die() { echo "bench/gpu-sass-ab.sh: $*" >&2; exit 2; }
bench_options 2,13 "--base=BASE --arch=ARCH ARGS=FILES" "$@"
[ -n "$BASE" ] || die "--base REV is required"
[ ${#FILES[@]} -gt 0 ] || die "name one or more .cu files"
command -v nvcc > /dev/null || die "no nvcc"
rev=$(git -C "$root" rev-parse --short "$BASE" 2> /dev/null) || die "--base $BASE is not a commit"
[ -d "$root/build/generated" ] || die "no build/generated: run tools/build.sh first"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-sass.XXXXXX")
trap 'git -C "$root" worktree remove --force "$scratch/base" > /dev/null 2>&1; rm -rf "$scratch"' EXIT
git -C "$root" worktree add --detach "$scratch/base" "$rev" > /dev/null 2>&1 || die "cannot check out $rev"

# The build's flags (tools/build.sh: Release), the includes of each tree.
cubin() { # TREE FILE OUT
  nvcc -O3 -DNDEBUG -D_GNU_SOURCE -DBOOST_ALL_NO_LIB -std=c++17 -I"$1/src" -I"$root/build/generated" \
    -I/usr/include/hdf5/serial $(mpicc --showme:compile 2> /dev/null) -cubin -arch=sm_$ARCH -Xptxas -v \
    "$1/$2" -o "$3" 2> "$3.ptxas"
}
# kernel, sha-256 of its code (16 digits), bytes; then registers and spills
kernels() {
  python3 - "$1" << 'PY'
import hashlib, re, struct, sys
path = sys.argv[1]
b = open(path, 'rb').read()
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3A)
hdrs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
strtab = hdrs[shstrndx][4]
res, cur = {}, None
for line in open(path + '.ptxas'):
    m = re.search(r"Compiling entry function '(\S+)'", line)
    if m: cur = m.group(1)
    m = re.search(r'Used (\d+) registers', line)
    if m and cur: res.setdefault(cur, {})['regs'] = m.group(1)
    m = re.search(r'(\d+) bytes spill stores', line)
    if m and cur: res.setdefault(cur, {})['spill'] = m.group(1)
for h in hdrs:
    name = b[strtab + h[0]:b.index(b'\0', strtab + h[0])].decode()
    if name.startswith('.text.'):
        k = name[6:]
        r = res.get(k, {})
        print(k, hashlib.sha256(b[h[4]:h[4] + h[5]]).hexdigest()[:16], h[5], r.get('regs', '?'), r.get('spill', '?'))
PY
}
status=0
for f in "${FILES[@]}"; do
  rel=$(realpath --relative-to="$root" "$f")
  [ -f "$scratch/base/$rel" ] || { echo "$rel: not in $rev"; continue; }
  cubin "$scratch/base" "$rel" "$scratch/a.cubin" || die "$rel at $rev does not compile: $(tail -3 "$scratch/a.cubin.ptxas")"
  cubin "$root" "$rel" "$scratch/b.cubin" || die "$rel does not compile: $(tail -3 "$scratch/b.cubin.ptxas")"
  kernels "$scratch/a.cubin" | sort > "$scratch/a.txt"
  kernels "$scratch/b.cubin" | sort > "$scratch/b.txt"
  same=0 diff=0
  while read -r k ha sa ra pa; do
    read -r hb sb rb pb < <(awk -v k="$k" '$1 == k {print $2, $3, $4, $5}' "$scratch/b.txt")
    if [ "$ha" = "$hb" ]; then same=$((same + 1)); continue; fi
    diff=$((diff + 1))
    printf '%s: %s differs: %s -> %s bytes, %s -> %s registers, %s -> %s bytes spilled\n' "$rel" "$k" "$sa" \
      "${sb:-gone}" "$ra" "${rb:-?}" "$pa" "${pb:-?}"
  done < "$scratch/a.txt"
  echo "$rel: sm_$ARCH, $same kernels the same machine code as $rev, $diff different"
  [ $diff -eq 0 ] || status=1
done
exit $status
