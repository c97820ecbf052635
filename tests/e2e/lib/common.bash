# Shared helpers for the end-to-end tests (sourced, not run by ctest).
set -euo pipefail
: "${WT_SOURCE_DIR:?}" "${WT_BINARY_DIR:?}"
WAVETRAIN="$WT_BINARY_DIR/wavetrain"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

fail() { echo "FAIL: $*" >&2; exit 1; }

# Prints the path of the real Fashion-MNIST HDF5 file, converting it once per build tree.
fashion_mnist_h5() {
  local repo_copy="$WT_SOURCE_DIR/data/fashion_mnist.h5"
  if [[ -f "$repo_copy" ]]; then echo "$repo_copy"; return; fi
  local f="$WT_BINARY_DIR/test-data/fashion_mnist.h5"
  if [[ ! -f "$f" ]]; then
    mkdir -p "$(dirname "$f")"
    "$WT_BINARY_DIR/fmnist_to_hdf5" --output "$f" >&2
  fi
  echo "$f"
}

# A scratch directory, removed when the test exits (set here, not in a $(...) subshell, whose
# EXIT trap would fire at once).
dir=$(mktemp -d "${TMPDIR:-/tmp}/wt-e2e.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# Value of a column in the last row of metrics.csv whose kind matches.
last_metric() {  # file kind column
  awk -F, -v kind="$2" -v col="$3" 'NR==1 { for (i=1;i<=NF;i++) idx[$i]=i; next }
      $1==kind { v=$(idx[col]) } END { print v }' "$1"
}
