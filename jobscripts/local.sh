#!/usr/bin/env bash
# wavetrain on a workstation: one MPI rank per GPU (or per CPU core without GPUs), resuming by
# itself whenever a run stops with a checkpoint (exit status 75).
#
#   jobscripts/local.sh DECK [wavetrain options...]
#   WT_RANKS=2 jobscripts/local.sh inputs/fashion_lenet.toml --set train.epochs=2
#
# Ranks: WT_RANKS if set, else the number of GPUs nvidia-smi lists, else the number of cores.
# Binary: WAVETRAIN, else build/wavetrain next to this script's directory.
# When wavetrain stops with a checkpoint (exit 75: --walltime ran out, or a rank got SIGUSR1 or
# SIGTERM from elsewhere) this script starts it again and it resumes (checkpoint.restart=auto),
# at most MAX_RESTARTS times. Ctrl-C or `kill -USR1`/`kill -TERM` of this script itself is passed
# on (wavetrain saves a checkpoint and exits 75) and then ends the script; run the same command
# again to resume (or set WT_RESUME_ON_SIGNAL=1 to carry on at once).
set -uo pipefail
deck=${1:?usage: $0 DECK [wavetrain options...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WAVETRAIN=${WAVETRAIN:-$here/build/wavetrain}
MAX_RESTARTS=${MAX_RESTARTS:-20}

if [[ -n ${WT_RANKS:-} ]]; then
  ranks=$WT_RANKS
elif gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') && ((gpus > 0)); then
  ranks=$gpus
else
  ranks=$(nproc)
fi
export OMP_NUM_THREADS=1                # one BLAS thread per rank
# Open MPI refuses root without these; harmless for a normal user and for other MPIs.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

for ((restart = 0; ; restart++)); do
  echo "local.sh: $ranks rank(s), deck $deck, run $((restart + 1))"
  mpirun -n "$ranks" "$WAVETRAIN" "$deck" --set checkpoint.restart=auto "$@" &
  run=$!
  signalled=0
  trap 'signalled=1; kill -USR1 "$run" 2>/dev/null' USR1 TERM INT
  while kill -0 "$run" 2>/dev/null; do wait "$run"; done
  wait "$run"
  status=$?
  trap - USR1 TERM INT
  echo "local.sh: wavetrain exited with status $status"
  # 75: a checkpoint was saved. Carry on, unless a person asked to stop or it keeps happening.
  if [[ $status -ne 75 ]] || ((signalled && !${WT_RESUME_ON_SIGNAL:-0})) ||
    ((restart + 1 >= MAX_RESTARTS)); then
    exit "$status"
  fi
done
