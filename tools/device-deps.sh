#!/usr/bin/env bash
# Packs this machine's build dependencies that the GPU machine may lack
# (it has no package registry) into .carry/deps, a prefix that
# tools/device-check.sh uses only for what the GPU machine does not have:
# Boost.Math's headers (only those special_boost.cpp includes), OpenSSL's
# headers and libcrypto, LAPACKE and OpenBLAS (which holds LAPACK).  The
# development names (libX.so) are linker scripts pointing at the runtime
# names, so no library travels twice (the carry limit is 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.carry/deps
rm -rf "$out"; mkdir -p "$out/include" "$out/lib"
lib=/usr/lib/x86_64-linux-gnu
# Boost: the headers the one translation unit that uses it pulls in.
g++ -std=c++14 -M -I src src/common/special_boost.cpp | tr ' \\' '\n\n' | grep '/boost/' | sort -u |
  while read -r h; do d="$out/include/${h#/usr/include/}"; mkdir -p "$(dirname "$d")"; cp "$h" "$d"; done
cp -r /usr/include/openssl "$out/include/"
cp /usr/include/x86_64-linux-gnu/openssl/*.h "$out/include/openssl/"
cp /usr/include/lapack.h /usr/include/lapacke*.h "$out/include/"
cp /usr/include/x86_64-linux-gnu/openblas-pthread/{cblas.h,openblas_config.h} "$out/include/"
# Runtime names (sonames) as files, development names as linker scripts.
cp -L "$lib/openblas-pthread/libopenblas.so.0" "$out/lib/libopenblas.so.0"
cp -L "$lib/liblapacke.so.3" "$out/lib/liblapacke.so.3"
cp -L "$lib/libtmglib.so.3" "$out/lib/libtmglib.so.3"
cp -L "$lib/libcrypto.so.3" "$out/lib/libcrypto.so.3"
cp -L "$lib/libgfortran.so.5" "$lib/libquadmath.so.0" "$out/lib/"
for n in openblas:libopenblas.so.0 lapacke:liblapacke.so.3 crypto:libcrypto.so.3 lapack:libopenblas.so.0; do
  printf 'INPUT(%s)\n' "${n#*:}" > "$out/lib/lib${n%%:*}.so"
done
# LAPACKE and tmglib ask the loader for liblapack.so.3 and libblas.so.3
# (a linker script cannot serve the loader): empty libraries under those
# names that need OpenBLAS, which answers both.
printf 'void fd_blas_stub(void) {}\n' > "$out/stub.c"
for n in liblapack.so.3 libblas.so.3; do
  gcc -shared -fPIC -o "$out/lib/$n" "$out/stub.c" -Wl,--no-as-needed -L"$out/lib" -l:libopenblas.so.0
done
rm "$out/stub.c"
du -sh "$out"
