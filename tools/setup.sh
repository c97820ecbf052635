#!/usr/bin/env bash
# Idempotent, non-interactive setup on Debian 12: install missing packages, configure, build,
# and convert Fashion-MNIST to HDF5. Fast when everything is already there (no apt-get update).
# Extra CMake arguments: WAVETRAIN_CMAKE_ARGS="-DWAVETRAIN_CUDA=OFF ..." tools/setup.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(cmake g++ make pkg-config libtrilinos-kokkos-dev libopenmpi-dev openmpi-bin
          libhdf5-openmpi-dev libopenblas-dev libdnnl-dev libtomlplusplus-dev libcli11-dev libgtest-dev
          dataset-fashion-mnist bible-kjv bible-kjv-text python3 python3-h5py python3-numpy
          python3-matplotlib python3-pil zlib1g-dev
          slurm-wlm munge)  # slurm-wlm, munge: the job-script test starts a private Slurm cluster

step() { echo "==> $*"; }

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
  done
else
  echo "==> not a Debian system (no dpkg-query): install the dependencies listed in INSTALL yourself" >&2
fi

if ((${#missing[@]})); then
  step "installing missing packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "error: not root and no sudo; as root run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    -o DPkg::Lock::Timeout=600 "${missing[@]}"
else
  step "all Debian packages present"
fi

JOBS=$(nproc 2>/dev/null || echo 2)
step "configuring build/ (Release${WAVETRAIN_CMAKE_ARGS:+ $WAVETRAIN_CMAKE_ARGS})"
# Word splitting of WAVETRAIN_CMAKE_ARGS is intended: it holds several -D options.
# shellcheck disable=SC2086
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${WAVETRAIN_CMAKE_ARGS:-} >build/configure.log 2>&1 ||
  { cat build/configure.log >&2; echo "error: cmake configure failed (log: build/configure.log)" >&2; exit 1; }

step "building with $JOBS jobs"
cmake --build build -j"$JOBS"

if [[ ! -f data/fashion_mnist.h5 ]]; then
  step "converting Fashion-MNIST to data/fashion_mnist.h5"
  if [[ ! -x build/fmnist_to_hdf5 ]]; then
    echo "error: build/fmnist_to_hdf5 was not built; cannot create data/fashion_mnist.h5" >&2
    exit 1
  fi
  mkdir -p data
  build/fmnist_to_hdf5 --output data/fashion_mnist.h5.tmp
  mv data/fashion_mnist.h5.tmp data/fashion_mnist.h5
else
  step "data/fashion_mnist.h5 present"
fi
if [[ ! -f data/kjv.h5 ]]; then
  step "converting the King James Bible text to data/kjv.h5 (character language model data)"
  tools/prepare_kjv.sh data/kjv.h5.tmp build
  mv data/kjv.h5.tmp data/kjv.h5
else
  step "data/kjv.h5 present"
fi
# pyenv and the like can shadow Debian's interpreter, which is the one with h5py and numpy.
if ! python3 -c 'import h5py, numpy' >/dev/null 2>&1 && /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
  echo "==> note: python3 on PATH ($(command -v python3)) lacks h5py/numpy; use /usr/bin/python3"
fi
step "setup done"
