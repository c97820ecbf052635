#!/usr/bin/env bash
# Packs prebuilt test binaries and the shared libraries they need into a bundle that
# tools/gpu-check.sh --bundle runs on a GPU machine with CUDA but without MPI, HDF5, Kokkos,
# oneDNN or OpenBLAS (docs/gpu-check.md). Run it where the binaries were built:
#
#   tools/make-gpu-bundle.sh [--build build] [--output build/gpu-bundle] [--tar] [--binary NAME]...
#                            [--training]
#
# --training also packs what tools/gpu-train-check.sh needs to train on the GPU machine: the
# wavetrain binary and the dataset converters (fmnist_to_hdf5, text_to_hdf5), Open MPI's launcher
# (mpirun, orted) for the multi-rank runs, and the raw datasets (Fashion-MNIST's four idx .gz
# files, the King James Bible as xz-compressed text), converted there (about 32 MB in all).
#
# What goes in, found with ldd (binaries, then Open MPI's plugins):
#   bin/            the binaries (default: wt_cuda_check, and wt_op_bench where it was built)
#   lib/            every shared library they need, except
#                     glibc's own (libc, libm, libdl, librt, libpthread, libresolv, ld-linux, ...):
#                     mixing glibc versions breaks, the GPU machine's glibc must serve;
#                     the driver's (libcuda, libnvidia-*): only the GPU machine's match its kernel;
#                     the CUDA toolkit's (cudart, cuBLAS, cuBLASLt, cuDNN, NCCL): hundreds of MB,
#                     taken from the GPU machine (its CUDA or pip nvidia-* wheels); their sonames
#                     are listed in DEVICE_LIBS and gpu-check.sh checks they are found there
#   lib/compat/     libstdc++ and libgcc_s, used only where the GPU machine's are too old
#   ompi/           Open MPI's plugins (and their libraries, in lib/), help texts and
#                   openmpi-mca-params.conf, for a singleton MPI_Init without mpirun; with
#                   --training also ompi/bin/ (mpirun, orted)
#   data/           with --training: the raw datasets
# --tar also writes OUTPUT.tar.xz (about a quarter of the size; gpu-check.sh --bundle takes either).
set -euo pipefail

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

build=build
out=
tar=0
training=0
binaries=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --output) out="$2"; shift 2 ;;
    --binary) binaries+=("$2"); shift 2 ;;
    --tar) tar=1; shift ;;
    --training) training=1; shift ;;
    -h | --help) usage 0 ;;
    *) echo "make-gpu-bundle.sh: unknown argument '$1'" >&2; usage 2 >&2 ;;
  esac
done
if [[ ${#binaries[@]} -eq 0 ]]; then
  binaries=(wt_cuda_check)
  [[ -x "$build/wt_op_bench" ]] && binaries+=(wt_op_bench)  # gpu-check.sh --ops
fi
((training)) && binaries+=(wavetrain fmnist_to_hdf5 text_to_hdf5)
[[ -n "$out" ]] || out="$build/gpu-bundle"
for b in "${binaries[@]}"; do
  [[ -x "$build/$b" ]] || { echo "make-gpu-bundle.sh: $build/$b not found (build it first)" >&2; exit 2; }
done

# Which of ldd's libraries stay behind (sets $kind): 'system' (glibc, driver), 'device' (CUDA
# toolkit), 'compat' (GCC's runtime), else 'carry'.
classify() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | librt.so.* | \
      libpthread.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libmvec.so.* | \
      libnss_*.so.* | libBrokenLocale.so.* | libthread_db.so.*) kind=system ;;
    libcuda.so.* | libnvidia*.so.* | libnvcuvid.so.*) kind=system ;;
    libcudart.so.* | libcublas.so.* | libcublasLt.so.* | libcudnn*.so.* | libnccl.so.* | \
      libnvrtc*.so.* | libnvJitLink.so.* | libcufft*.so.* | libcurand.so.* | libcusolver*.so.* | \
      libcusparse*.so.*) kind=device ;;
    libstdc++.so.* | libgcc_s.so.*) kind=compat ;;
    *) kind=carry ;;
  esac
}

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/compat" "$out/ompi/lib" "$out/ompi/share" "$out/ompi/etc"
declare -A device_libs=()

# Copies the libraries that ldd lists for the files given into the bundle; fails on one that ldd
# cannot find.
carry_libraries_of() {
  local soname path kind
  while read -r soname path; do
    [[ "$path" == "not" ]] && { echo "make-gpu-bundle.sh: $soname is needed but not found here" >&2; exit 1; }
    classify "${soname##*/}"
    case "$kind" in
      device) device_libs["${soname##*/}"]=1 ;;
      compat) [[ -e "$out/lib/compat/$soname" ]] || cp -L "$path" "$out/lib/compat/$soname" ;;
      carry) [[ -z "$path" || -e "$out/lib/$soname" ]] || cp -L "$path" "$out/lib/$soname" ;;
    esac
  done < <(ldd "$@" | awk '$2 == "=>" {print $1, $3} $2 != "=>" && NF > 1 && $1 !~ /:$/ {print $1}' | sort -u)
}

for b in "${binaries[@]}"; do
  cp "$build/$b" "$out/bin/"
  carry_libraries_of "$build/$b"
done

# Open MPI: the plugin directory (MPI_Init loads its components from there), the help texts that
# its error messages print and the site defaults (which switch off fabrics the plugins lack).
if grep -q 'libmpi\.so' <(ldd "$out"/bin/*); then
  pkglibdir=$(ompi_info --path pkglibdir | awk '{print $2}')
  pkgdatadir=$(ompi_info --path pkgdatadir | awk '{print $2}')
  sysconfdir=$(ompi_info --path sysconfdir | awk '{print $2}')
  mkdir -p "$out/ompi/lib/openmpi"
  cp -L "$pkglibdir"/*.so "$out/ompi/lib/openmpi/"
  carry_libraries_of "$out"/ompi/lib/openmpi/*.so
  cp -rL "$pkgdatadir" "$out/ompi/share/openmpi"
  cp -L "$sysconfdir"/openmpi-mca-params.conf "$out/ompi/etc/" 2>/dev/null || true
  ompi_info --version | head -1 >"$out/ompi/VERSION"
fi

# The launcher, for runs of several ranks on the GPU machine (mpirun starts local ranks itself;
# orted is there for Open MPI's checks), and the raw datasets.
if ((training)); then
  mkdir -p "$out/ompi/bin" "$out/data"
  for tool in orterun orted; do
    cp -L "$(command -v "$tool")" "$out/ompi/bin/$tool"
    carry_libraries_of "$out/ompi/bin/$tool"
  done
  ln -sf orterun "$out/ompi/bin/mpirun"
  fashion=/usr/share/datasets/fashion-mnist
  [[ -f $fashion/train-images-idx3-ubyte.gz ]] ||
    { echo "make-gpu-bundle.sh: $fashion not found (apt-get install dataset-fashion-mnist)" >&2; exit 1; }
  mkdir -p "$out/data/fashion-mnist"
  cp "$fashion"/*-ubyte.gz "$out/data/fashion-mnist/"
  command -v bible >/dev/null || { echo "make-gpu-bundle.sh: 'bible' not found (bible-kjv)" >&2; exit 1; }
  # As tools/prepare_kjv.sh writes it: verse numbers stripped.
  bible "Gen1:1-Rev22:21" | sed -E 's/^ +[0-9]+ //' | xz -6 >"$out/data/kjv.txt.xz"
fi

if [[ ${#device_libs[@]} -gt 0 ]]; then printf '%s\n' "${!device_libs[@]}" | sort; fi >"$out/DEVICE_LIBS"
{
  echo "made $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) from $(cd "$build" && pwd)"
  echo "source: $(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "binaries: ${binaries[*]}"
  echo "from the GPU machine: $(tr '\n' ' ' <"$out/DEVICE_LIBS")"
} >"$out/MANIFEST"

echo "bundle $out: $(du -sh "$out" | cut -f1) ($(find "$out/lib" -name '*.so*' | wc -l) libraries, $(find "$out/ompi" -name 'mca_*.so' | wc -l) MPI plugins)"
echo "needs from the GPU machine: $(tr '\n' ' ' <"$out/DEVICE_LIBS")"
if [[ $tar == 1 ]]; then
  tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T0 -6 >"$out.tar.xz"
  echo "archive $out.tar.xz: $(du -sh "$out.tar.xz" | cut -f1)"
fi
