#!/usr/bin/env bash
# Checks wavetrain's CUDA code on a GPU machine: runs wt_cuda_check (tests/cuda/cuda_check.cpp:
# every op of the ops interface on CUDA against the host (tests/cuda/ops_parity.cpp), ReLU over
# 17M elements and an NCCL allreduce, then cuBLAS and host GEMM GFLOP/s) and prints the machine
# and the figures.
# Record them in docs/gpu-check.md.
#
#   tools/gpu-check.sh [--build-dir DIR] [--no-build] [--runs N] [--log FILE]
#       On a node with the whole toolchain (CUDA, cuDNN, NCCL, MPI, HDF5, Kokkos): configures DIR
#       (default build-gpu) with -DWAVETRAIN_CUDA=ON, builds wt_cuda_check and runs it.
#   tools/gpu-check.sh --bundle DIR|DIR.tar.xz [--cuda-libs DIR[:DIR...]] [--runs N] [--log FILE]
#       On a GPU machine that has CUDA but not the rest (this workplace's device machine): runs
#       the prebuilt binary of a bundle made by tools/make-gpu-bundle.sh. cudart, cuBLAS, cuDNN
#       and NCCL come from --cuda-libs, else from the pip nvidia-* wheels of python3 (or
#       $WT_PYTHON), else /usr/local/cuda/lib64.
#   --runs N runs the check N times (the figures vary by a few per cent from run to run).
#   --torch "MODES" also runs the PyTorch reference (bench/torch_gpu_reference.py, FP32, synthetic
#       inputs, built from models/*.toml) on issue 19's rows, one fresh process per row and mode:
#       mlp 64, lenet 64, resnet 128, transformer_small 32 (every mode), lenet and resnet 1024
#       (eager and graph). MODES: any of eager graph compile replicas, e.g. "eager graph", each
#       also as MODE-bf16 (autocast to bf16: "graph-bf16").
#   --train PROOFS also trains on the GPU (tools/gpu-train-check.sh; a bundle made with
#       make-gpu-bundle.sh --training): "all", or a comma-separated list of parity, schedules,
#       ticktock, checkpoint, accuracy, auto, throughput, input, graphs (graphs_epoch: only its
#       run past an evaluation), graphs_ranks (NCCL inside a graph: SKIP below 2 GPUs), bf16.
#       Each proof prints one line, PASS, FAIL or SKIP.
#   --ops also times every op of the ops interface at the shipped models' layer shapes, wavetrain
#       (wt_op_bench) against PyTorch (bench/torch_op_reference.py) in the same run: one table.
#
# Exit status: 0 every check passed, 1 a check failed or the run broke, 2 usage, 77 no GPU seen.
set -uo pipefail

usage() {
  sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir="build-gpu"
build=1
bundle=
cuda_libs=${WT_CUDA_LIB_PATH:-}
log=
runs=1
torch_modes=
train_proofs=
ops=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --bundle) bundle="$2"; shift 2 ;;
    --cuda-libs) cuda_libs="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --torch) torch_modes="$2"; shift 2 ;;
    --train) train_proofs="$2"; shift 2 ;;
    --ops) ops=1; shift ;;
    -h | --help) usage 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1'" >&2; usage 2 >&2 ;;
  esac
done
if [[ -n "$log" ]]; then
  mkdir -p "$(dirname "$log")"
  exec > >(tee "$log") 2>&1
fi

section() { printf '\n== %s\n' "$*"; }

section "machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(hostname)  kernel: $(uname -r)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv
  nvidia-smi | sed -n '3p'
else
  echo "nvidia-smi: not found"
fi

if [[ -z "$bundle" ]]; then
  # (a) A node with everything installed: build and run through ctest's binary.
  cd "$repo" || exit 1
  if [[ $build == 1 ]]; then
    section "build ($build_dir)"
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DWAVETRAIN_CUDA=ON >"$build_dir.configure.log" 2>&1 ||
      { cat "$build_dir.configure.log"; echo "gpu-check.sh: configure failed"; exit 1; }
    grep -E 'wavetrain: (CUDA|host GEMM)' "$build_dir.configure.log"
    targets=(wt_cuda_check)
    [[ $ops == 1 ]] && targets+=(wt_op_bench)
    cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" || { echo "gpu-check.sh: build failed"; exit 1; }
  fi
  binary="$build_dir/wt_cuda_check"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
  # (b) A bundle: unpack it if archived, then point the loader and Open MPI at it.
  if [[ -f "$bundle" ]]; then
    dest=${TMPDIR:-/tmp}/wt-gpu-bundle.$$
    trap 'rm -rf "$dest"' EXIT
    if ! mkdir -p "$dest" || ! tar -C "$dest" -xJf "$bundle"; then
      echo "gpu-check.sh: cannot unpack $bundle"
      exit 1
    fi
    bundle=$(find "$dest" -mindepth 1 -maxdepth 1 -type d | head -1)
  fi
  bundle=$(cd "$bundle" && pwd) || exit 1
  section "bundle $bundle"
  cat "$bundle/MANIFEST"
  echo "size: $(du -sh "$bundle" | cut -f1)"
  binary="$bundle/bin/wt_cuda_check"
  if [[ -z "$cuda_libs" ]]; then
    python=${WT_PYTHON:-python3}
    command -v "$python" >/dev/null || python=/opt/torch/.venv/bin/python3
    nvidia_root=$("$python" -c 'import nvidia; print(*nvidia.__path__, sep="\n")' 2>/dev/null)
    while read -r root; do
      [[ -n "$root" ]] || continue
      for d in "$root"/*/lib; do [[ -d "$d" ]] && cuda_libs+="${cuda_libs:+:}$d"; done
    done <<<"$nvidia_root"
    [[ -d /usr/local/cuda/lib64 ]] && cuda_libs+="${cuda_libs:+:}/usr/local/cuda/lib64"
  fi
  section "CUDA libraries from this machine"
  tr ':' '\n' <<<"$cuda_libs"
  missing=0
  while read -r soname; do
    [[ -n "$soname" ]] || continue
    found=
    IFS=: read -ra dirs <<<"$cuda_libs"
    for d in "${dirs[@]}"; do
      [[ -e "$d/$soname" ]] && { found="$d/$soname"; break; }
    done
    if [[ -n "$found" ]]; then
      echo "$soname: $(readlink -f "$found")"
    else
      echo "$soname: NOT FOUND"
      missing=1
    fi
  done <"$bundle/DEVICE_LIBS"
  [[ $missing == 0 ]] || { echo "gpu-check.sh: this machine lacks a CUDA library the binary needs"; exit 1; }
  export LD_LIBRARY_PATH="$bundle/lib:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # GCC's runtime from the bundle only where this machine's is older than the build's.
  if ldd "$binary" 2>&1 | grep -qE "(GLIBCXX|CXXABI|GCC)_[0-9.]+' not found|lib(stdc\+\+|gcc_s).* => not found"; then
    export LD_LIBRARY_PATH="$bundle/lib/compat:$LD_LIBRARY_PATH"
    echo "using the bundle's libstdc++/libgcc_s (this machine's are older)"
  fi
  # Open MPI from the bundle, initialised as a singleton without a daemon (no mpirun).
  export OPAL_PREFIX="$bundle/ompi" OPAL_LIBDIR="$bundle/lib"
  export OPAL_PKGLIBDIR="$bundle/ompi/lib/openmpi" OPAL_PKGDATADIR="$bundle/ompi/share/openmpi"
  export OPAL_SYSCONFDIR="$bundle/ompi/etc" OPAL_DATADIR="$bundle/ompi/share"
  export OMPI_MCA_mca_base_component_path="$bundle/ompi/lib/openmpi"
  export OMPI_MCA_mca_base_component_show_load_errors=${OMPI_MCA_mca_base_component_show_load_errors:-0}
  export OMPI_MCA_ess_singleton_isolated=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # hwloc's plugins are not carried; keep it from loading another version's from this machine.
  mkdir -p "$bundle/lib/hwloc-none" && export HWLOC_PLUGINS_PATH="$bundle/lib/hwloc-none"
fi

[[ -x "$binary" ]] || { echo "gpu-check.sh: $binary not found"; exit 1; }
section "libraries (ldd $binary)"
ldd "$binary" | grep -vE '^\s*(linux-vdso|/lib64/ld-linux)'
if ldd "$binary" | grep -q 'not found'; then
  echo "gpu-check.sh: a library is missing (above)"
  exit 1
fi
if command -v cuobjdump >/dev/null; then
  echo "GPU code: $(cuobjdump --list-elf "$binary" 2>/dev/null | grep -o 'sm_[0-9a-z]*' | sort -u | tr '\n' ' ')"
fi

status=0
for ((run = 1; run <= runs; ++run)); do
  section "wt_cuda_check (run $run of $runs)"
  start=$(date +%s.%N)
  "$binary"
  code=$?
  echo "exit status $code after $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s"
  if [[ $code != 0 && $status != 1 ]]; then status=$code; fi
done
if [[ -n $torch_modes ]]; then
  section "PyTorch reference (bench/torch_gpu_reference.py), samples/s and peak memory"
  python=${WT_PYTHON:-python3}
  for row in mlp:64 lenet:64 resnet:128 transformer_small:32 lenet:1024 resnet:1024; do
    for mode in $torch_modes; do
      # The large batches measure bandwidth, not launches: eager and the graph only.
      [[ ${row#*:} == 1024 && ${mode%-bf16} != eager && ${mode%-bf16} != graph ]] && continue
      # MODE-bf16: the same mode under autocast to bf16 (issue 37's GPU rows).
      precision=fp32
      [[ $mode == *-bf16 ]] && precision=bf16
      "$python" "$repo/bench/torch_gpu_reference.py" --model "${row%%:*}" --batch "${row#*:}" \
        --mode "${mode%-bf16}" --precision "$precision" --steps 100 --repeats 3 ||
        echo "torch reference ${row} ${mode}: failed"
    done
  done
fi
# ---- training on the GPU (tools/gpu-train-check.sh) ----
# The training proofs run also after a failed op check (they tell other things), not without a GPU.
if [[ -n $train_proofs && $status != 77 ]]; then
  section "training proofs ($train_proofs)"
  if [[ -z "$bundle" || ! -x "$bundle/bin/wavetrain" ]]; then
    echo "gpu-check.sh: --train needs a bundle made with make-gpu-bundle.sh --training"
    status=1
  else
    bash "$repo/tools/gpu-train-check.sh" "$bundle" --only "$train_proofs" || status=1
  fi
fi
# ---- end of the training proofs ----
# ---- per-op timing (--ops; issue 31's kernel work): begin ---------------------------------------
# wt_op_bench and the PyTorch script time the same case list (torch_op_reference.py --cases, from
# models/*.toml), each op REPS calls as one CUDA graph, median replay; the script prints the table.
if [[ $ops == 1 && $status != 77 ]]; then
  section "per-op timing: wavetrain (wt_op_bench) against PyTorch (bench/torch_op_reference.py)"
  python=${WT_PYTHON:-python3}
  op_bench="$(dirname "$binary")/wt_op_bench"
  op_dir=$(mktemp -d)
  if [[ ! -x "$op_bench" ]]; then
    echo "gpu-check.sh: $op_bench not found (bundle it: make-gpu-bundle.sh builds it in by default)"
    status=1
  elif ! "$python" "$repo/bench/torch_op_reference.py" --cases >"$op_dir/cases"; then
    echo "gpu-check.sh: torch_op_reference.py --cases failed"
    status=1
  else
    echo "$(wc -l <"$op_dir/cases") cases; wavetrain first, then PyTorch"
    "$op_bench" "$op_dir/cases" >"$op_dir/wavetrain" || { grep -v '^id=[0-9]* us=' "$op_dir/wavetrain"; status=1; }
    "$python" "$repo/bench/torch_op_reference.py" --wavetrain "$op_dir/wavetrain" || status=1
  fi
  rm -rf "$op_dir"
fi
# ---- per-op timing: end ---------------------------------------------------------------------------

case $status in
  0) echo "gpu-check: PASSED" ;;
  77) echo "gpu-check: no CUDA device seen (is this a GPU machine?)" ;;
  *) echo "gpu-check: FAILED"; status=1 ;;
esac
exit $status
