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
    # Tests run in parallel (ctest -j): one converts under the lock, the others wait for it, and
    # the file appears under its name only when complete.
    (
      flock 9
      if [[ ! -f "$f" ]]; then
        "$WT_BINARY_DIR/fmnist_to_hdf5" --output "$f.tmp.$$" >&2 && mv -f "$f.tmp.$$" "$f"
      fi
    ) 9>"$f.lock"
  fi
  echo "$f"
}

# A scratch directory, removed when the test exits (set here, not in a $(...) subshell, whose
# EXIT trap would fire at once). WT_KEEP_E2E_DIR=1 keeps it, to debug a failure.
dir=$(mktemp -d "${TMPDIR:-/tmp}/wt-e2e.XXXXXX")
trap 'remove_scratch "$dir"' EXIT

# Removes a scratch directory (not with WT_KEEP_E2E_DIR=1). A daemon that saves its files as it
# exits can write into the directory while rm -rf empties it ('cannot remove .../slurm/state:
# Directory not empty' failed e2e.slurm_two_hosts after every check had passed): retry, and a
# leftover is reported, never the test's failure.
remove_scratch() {  # directory
  [[ -n ${WT_KEEP_E2E_DIR:-} ]] && return 0
  local attempt
  for attempt in 1 2 3 4 5; do
    rm -rf "$1" 2>/dev/null && return 0
    sleep 1
  done
  echo "note: could not remove $1" >&2
}

# Value of a column in the last row of metrics.csv whose kind matches.
last_metric() {  # file kind column
  awk -F, -v kind="$2" -v col="$3" 'NR==1 { for (i=1;i<=NF;i++) idx[$i]=i; next }
      $1==kind { v=$(idx[col]) } END { print v }' "$1"
}

# Waits until a line of file $1 matches the extended regex $2, polling every 0.1 s, for at most $3
# seconds; fails naming the file, the pattern and its last lines. With a pid $4, fails at once if
# that process ends first (a run that died). The tests that must act while a run is still running
# (a signal, a kill, a full disk) wait for such a sign of progress this way, never for a duration:
# how long a run takes depends on the machine and its load. $3 is only a bound against a hang.
wait_for_line() {  # file regex timeout_seconds [pid]
  local deadline=$((SECONDS + $3))
  until [[ -f $1 ]] && grep -qE -- "$2" "$1"; do
    if [[ -n ${4:-} ]] && ! kill -0 "$4" 2>/dev/null; then
      [[ -f $1 ]] && grep -qE -- "$2" "$1" && return 0  # the line came just before the end
      echo "--- last lines of $1:" >&2; tail -n 20 "$1" >&2 2>/dev/null || true
      fail "process $4 ended before a line of $1 matched '$2'"
    fi
    if ((SECONDS >= deadline)); then
      echo "--- last lines of $1:" >&2; tail -n 20 "$1" >&2 2>/dev/null || true
      fail "no line of $1 matched '$2' within $3 s"
    fi
    sleep 0.1
  done
}

# A step count no run in the tests can reach: a run that a test stops (a signal, a kill, a full
# disk, a walltime) gets it, so that it cannot end on its own before the test acts, however fast
# the machine is.
ENDLESS_STEPS=100000000

# Runs `wavetrain DECK --steps 3` (at most 120 s) and checks its exit status and that stderr
# matches a pattern; prints the message's first line.
expect_status() {  # name status pattern deck
  set +e
  timeout 120 "$WAVETRAIN" "$4" --steps 3 >"$dir/$1.out" 2>"$dir/$1.err"
  local rc=$?
  set -e
  [[ $rc == "$2" ]] || { cat "$dir/$1.err"; fail "$1: exit status $rc, expected $2"; }
  grep -q -- "$3" "$dir/$1.err" || { cat "$dir/$1.err"; fail "$1: message lacks '$3'"; }
  echo "ok $1: $(head -1 "$dir/$1.err")"
}
