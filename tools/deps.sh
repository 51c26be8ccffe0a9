#!/usr/bin/env bash
# Installs what fcbo-dist needs to build and test, on Debian or Ubuntu, only
# where it is missing: compiler, CMake, Open MPI, serial HDF5 (and its
# tools, for h5dump), cairo (dpc --plot), OpenBLAS (bcp on the CPU),
# clang with its libFuzzer runtime (tools/fuzz.sh), and SLURM with munge
# for the batch-script test (which starts a private one-node SLURM of its
# own; tools/slurm-local.sh), LAPACKE (bcp), OpenSSL's libcrypto (SHA-256)
# and the Boost headers (Boost.Math: the p-values).  CUDA is not installed
# here: the CUDA backends
# are built when nvcc is already on the PATH or in /usr/local/cuda.
set -euo pipefail
pkgs=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools slurm-wlm munge libcairo2-dev libopenblas-dev liblapacke-dev libssl-dev libboost-dev clang)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
# libFuzzer's runtime comes in a package named after clang's version.
if command -v clang > /dev/null; then
  rt=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev
  if ! dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q "install ok installed" &&
     apt-cache show "$rt" > /dev/null 2>&1; then
    echo "deps: installing $rt"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$rt" > /dev/null
  fi
fi
