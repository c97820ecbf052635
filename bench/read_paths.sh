#!/usr/bin/env bash
# DatasetReader's read paths side by side: the memory map (the default for uncompressed data),
# pread() and H5Dread, reading shuffled batches of 64 rows of Fashion-MNIST from the page cache
# (tools/dataset_throughput --read-path), interleaved rounds. Prints each round and the median
# seconds per path. The map is what the SIGBUS guard (src/data/mapped_read_guard.hpp) keeps.
# Usage: bench/read_paths.sh [rounds] [batches] [dataset]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
bin="${WT_BUILD_DIR:-$root/build}/dataset_throughput"
rounds="${1:-7}" batches="${2:-8000}" data="${3:-$root/data/fashion_mnist.h5}"
declare -A times
for ((r = 1; r <= rounds; ++r)); do
  for path in mapped pread hdf5; do
    t=$("$bin" --dataset "$data" --batch 64 --batches "$batches" --read-path "$path" |
      sed -n 's/^DatasetReader::read .* samples in *\([0-9.]*\) s.*/\1/p')
    echo "round $r $path $t s"
    times[$path]+="$t "
  done
done
for path in mapped pread hdf5; do
  median=$(tr ' ' '\n' <<<"${times[$path]}" | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "$path: median $median s for $((batches * 64)) rows, $(awk -v t="$median" -v n=$((batches * 64)) 'BEGIN {printf "%.2f", t / n * 1e6}') us per row"
done
