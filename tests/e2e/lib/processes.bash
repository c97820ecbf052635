# Helpers for the failure tests, which start a job in the background, disturb one of its ranks
# and must leave no process behind. Sourced after common.bash.

# The pid of the wavetrain process of world rank $2 whose command line contains $1 (a unique
# run directory); empty if none.
rank_pid() {  # pattern rank
  local p
  for p in $(pgrep -f -- "$1" || true); do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == wavetrain ]] || continue
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"
      return
    fi
  done
}

# Waits until file $1 has at least $2 lines (up to $3 seconds).
wait_lines() {  # file lines timeout
  local i
  for ((i = 0; i < $3 * 10; ++i)); do
    [[ -f "$1" && $(wc -l <"$1") -ge $2 ]] && return 0
    sleep 0.1
  done
  fail "$1 did not reach $2 lines within $3 s"
}

# Waits up to $2 seconds for pid $1 to exit; returns 1 if it is still running.
wait_gone() {  # pid timeout
  local i
  for ((i = 0; i < $2 * 10; ++i)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

# Ends every process whose command line contains $1 (stopped ones are continued first so the
# signal lands), then the scratch directory. Installed as the EXIT trap by the tests.
kill_matching() {  # pattern
  local p
  for p in $(pgrep -f -- "$1" || true); do
    [[ $p == "$$" ]] && continue
    kill -KILL "$p" 2>/dev/null || true
    kill -CONT "$p" 2>/dev/null || true
  done
}

# Mounts a tmpfs of size $1 at $dir/mnt (set as $mnt), a small real file system to fill; when the
# test exits, the processes whose command line contains $2 are ended, then it is unmounted. Skips
# the test (77) where a tmpfs cannot be mounted (not root).
small_tmpfs() {  # size pattern
  mnt="$dir/mnt"
  mkdir -p "$mnt"
  mount -t tmpfs -o size="$1" tmpfs "$mnt" 2>/dev/null || { echo "cannot mount a tmpfs: skipped"; exit 77; }
  trap "kill_matching '$2'; umount '$mnt' 2>/dev/null || umount -l '$mnt'; rm -rf '$dir'" EXIT
}
