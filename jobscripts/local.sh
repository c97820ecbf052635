#!/usr/bin/env bash
# wavetrain on a workstation: one MPI rank per GPU (or per CPU core without GPUs), resuming by
# itself whenever a run stops with a checkpoint (exit status 75).
#
#   jobscripts/local.sh DECK [wavetrain options...]
#   WT_RANKS=2 jobscripts/local.sh inputs/fashion_lenet.toml --set train.epochs=2
#
# Ranks: WT_RANKS if set (a whole number, at least 1), else the number of GPUs nvidia-smi lists,
# else the number of cores.
# Binary: WAVETRAIN, else build/wavetrain next to this script's directory.
# When wavetrain stops with a checkpoint (exit 75: --walltime ran out, or a rank or mpirun got
# SIGUSR1, SIGTERM or SIGINT from elsewhere) this script starts it again and it resumes
# (checkpoint.restart=auto), at most MAX_RESTARTS times. A --walltime among the options is the
# budget of the whole script: each restart gets the time left, not the same wall time again.
# A --restart-from FILE applies to the first start only: the restarts resume the run's own
# checkpoints. Ctrl-C or `kill -USR1`/`-TERM`/`-INT`/
# `-HUP` of this script itself is passed on (wavetrain saves a checkpoint and exits 75) and then
# ends the script with status 75; run the same command again to resume (or set
# WT_RESUME_ON_SIGNAL=1 to carry on at once).
#
# Why the status survives a signal to mpirun itself: Open MPI's mpirun answers SIGTERM/SIGINT by
# sending the ranks SIGTERM after odls_base_sigkill_timeout seconds and SIGKILL after as many
# again, and then exits 1 whatever the ranks returned. So rank 0 also writes its status into
# WAVETRAIN_EXIT_STATUS_FILE, which this script reads; WT_STOP_GRACE (default 3) is that
# timeout here: time enough for the ranks to save, and mpirun takes about twice as long to end.
# mpirun runs in its own process group (set -m), so Ctrl-C reaches only this script, which hands
# it on as SIGUSR1: mpirun forwards that to the ranks at once and returns their 75 itself.
set -uo pipefail
set -m
deck=${1:?usage: $0 DECK [wavetrain options...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WAVETRAIN=${WAVETRAIN:-$here/build/wavetrain}
MAX_RESTARTS=${MAX_RESTARTS:-20}

if [[ -n ${WT_RANKS:-} ]]; then
  if [[ ! $WT_RANKS =~ ^[0-9]+$ ]] || ((10#$WT_RANKS < 1)); then
    echo "local.sh: error: WT_RANKS=$WT_RANKS: the number of ranks must be a whole number, at least 1" >&2
    exit 2
  fi
  ranks=$((10#$WT_RANKS))
elif gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') && ((gpus > 0)); then
  ranks=$gpus
else
  ranks=$(nproc)
fi
export OMP_NUM_THREADS=1                # one BLAS thread per rank
# Open MPI refuses root without these; harmless for a normal user and for other MPIs.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-${WT_STOP_GRACE:-3}}
# Seconds in "SECONDS", "MM:SS" or "HH:MM:SS" (wavetrain's --walltime forms); empty if not one.
walltime_seconds() {
  local -a f
  IFS=: read -ra f <<<"$1"
  [[ $1 =~ ^[0-9]+(:[0-9]+){0,2}$ ]] || return 0
  local s=0 x
  for x in "${f[@]}"; do s=$((s * 60 + 10#$x)); done
  echo "$s"
}
# The options for restart $1: --walltime gets the seconds left of the first start's budget, and
# --restart-from is dropped after the first start (the run has its own checkpoints by then).
# Sets the array `args`; returns 1 when the wall time is used up.
restart_args() {
  args=()
  local -a given=("${@:2}")
  local i a left
  for ((i = 0; i < ${#given[@]}; i++)); do
    a=${given[i]}
    case $a in
      --walltime | --restart-from)
        local value=${given[i + 1]:-}
        i=$((i + 1))
        ;;
      --walltime=* | --restart-from=*) local value=${a#*=} a=${a%%=*} ;;
      *) args+=("$a"); continue ;;
    esac
    if [[ $a == --restart-from ]]; then
      (($1 == 0)) && args+=(--restart-from "$value")
      continue
    fi
    budget=${budget:-$(walltime_seconds "$value")}
    if [[ -z $budget || $1 == 0 ]]; then
      args+=(--walltime "$value")  # the first start, or a form wavetrain itself will judge
      continue
    fi
    left=$((budget - (SECONDS - started)))
    ((left > 0)) || return 1
    args+=(--walltime "$left")
  done
}
started=$SECONDS
budget=

status_dir=$(mktemp -d "${TMPDIR:-/tmp}/wavetrain-local.XXXXXX") || exit 1
trap 'rm -rf "$status_dir"' EXIT
export WAVETRAIN_EXIT_STATUS_FILE=$status_dir/status

for ((restart = 0; ; restart++)); do
  if ! restart_args "$restart" "$@"; then
    echo "local.sh: the wall time ($budget s) is used up: not restarting; run the same command again to resume"
    exit 75
  fi
  echo "local.sh: $ranks rank(s), deck $deck, run $((restart + 1))"
  rm -f "$WAVETRAIN_EXIT_STATUS_FILE"
  # </dev/null: a background process group that reads the terminal would be stopped (SIGTTIN).
  mpirun -n "$ranks" "$WAVETRAIN" "$deck" --set checkpoint.restart=auto "${args[@]}" </dev/null &
  run=$!
  signalled=0
  trap 'signalled=1; kill -USR1 "$run" 2>/dev/null' USR1 TERM INT HUP
  while kill -0 "$run" 2>/dev/null; do wait "$run"; done
  wait "$run"
  status=$?
  trap - USR1 TERM INT HUP
  # A non-zero mpirun status after a signal may hide the ranks' own: rank 0's record wins.
  recorded=$(cat "$WAVETRAIN_EXIT_STATUS_FILE" 2>/dev/null)
  if [[ $status -ne 0 && $recorded =~ ^[0-9]+$ && $recorded -ne $status ]]; then
    echo "local.sh: mpirun exited with status $status; wavetrain's rank 0 exited with $recorded"
    status=$recorded
  fi
  echo "local.sh: wavetrain exited with status $status"
  # 75: a checkpoint was saved. Carry on, unless a person asked to stop or it keeps happening.
  if [[ $status -ne 75 ]] || ((signalled && !${WT_RESUME_ON_SIGNAL:-0})) ||
    ((restart + 1 >= MAX_RESTARTS)); then
    exit "$status"
  fi
done
