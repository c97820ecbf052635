# A private single-node Slurm cluster on localhost for the job-script tests (sourced, not run).
#
#   slurm_cluster_start DIR     munged, slurmctld and slurmd with every file under DIR
#   (slurm_munge_start, slurm_write_conf and slurm_wait_idle are its parts, which
#   lib/two_hosts.bash reuses for a cluster of two hosts)
#   slurm_cluster_stop          cancel what is left of our jobs, stop the daemons we started
#   slurm_wait_job ID SECONDS   poll until the job has ended; prints its final state
#   slurm_job_field ID FIELD    one field of `scontrol -o show job ID` (e.g. ExitCode, Restarts)
#
# Needs root (slurmd runs jobs as their owner, and SlurmdUser=root here), Debian's slurm-wlm and
# munge packages. Nothing is installed as a service and no system file is touched: each daemon has
# its own config, key, socket, spool, log and ports under DIR, and only the pids started here are
# ever signalled. Clients find the cluster through SLURM_CONF, exported by slurm_cluster_start.
# Settings verified with Slurm 22.05 on Debian 12: no cgroups (proctrack/linuxproc, task/none), no
# accounting, and scheduling without delay (sched_min_interval=0) so a job starts within a second.

SLURM_SKIP_STATUS=77
_slurm_pids=()

# Exits with ctest's skip status and a one-line reason when a cluster cannot be started here.
slurm_require() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "skipped: needs root to start slurmd"
    exit "$SLURM_SKIP_STATUS"
  fi
  local cmd
  for cmd in munged slurmctld slurmd sbatch scontrol sinfo scancel; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
      echo "skipped: $cmd not found (apt-get install slurm-wlm munge; tools/setup.sh does)"
      exit "$SLURM_SKIP_STATUS"
    fi
  done
}

# A TCP port nobody listens on, from a range away from Slurm's defaults (6817-6819), so that two
# clusters (another test, a system Slurm) never share one.
_slurm_free_port() {
  local port tries
  for ((tries = 0; tries < 200; tries++)); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free TCP port found" >&2
  return 1
}

# munged with its key, socket and log under ROOT; clients and daemons find it through AuthInfo.
slurm_munge_start() {  # root
  local root=$1
  mkdir -p "$root"/{etc,key,munge,log,state,spool}
  # munged insists: key readable by its owner only, socket directory searchable by everyone.
  chmod 0700 "$root/key"
  # (mktemp -d makes the scratch directory 0700, which would hide the socket.)
  chmod go+x "$(dirname "$root")"
  chmod 0755 "$root" "$root/munge"
  head -c 1024 /dev/urandom >"$root/key/munge.key"
  chmod 0400 "$root/key/munge.key"
  munged --foreground --key-file="$root/key/munge.key" --socket="$root/munge/socket" \
    --pid-file="$root/key/munged.pid" --log-file="$root/log/munged.log" \
    --seed-file="$root/key/seed" >"$root/log/munged.out" 2>&1 &
  _slurm_pids+=($!)
  local pid=$! deadline=$((SECONDS + 10))
  until [[ -S $root/munge/socket ]]; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
      echo "munged did not start:" >&2
      cat "$root/log/munged.out" >&2
      return 1
    fi
    sleep 0.05
  done
}

# ROOT/etc/slurm.conf for a controller CTLD_HOST(CTLD_ADDR) and the nodes NODE_LINES (one
# `NodeName=... NodeAddr=...` line each, resources as `slurmd -C` reports them), all in one
# partition; exports SLURM_CONF. Each node has its own spool and TmpFS (where srun's PMIx plugin
# keeps its files, named after the job and step only) under ROOT, as separate hosts would.
slurm_write_conf() {  # root ctld_host ctld_addr ctld_port slurmd_port node_names node_lines
  local root=$1
  cat >"$root/etc/slurm.conf" <<CONF
ClusterName=wtci
SlurmctldHost=$2($3)
SlurmctldPort=$4
SlurmdPort=$5
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$root/munge/socket,cred_expire=5
StateSaveLocation=$root/state
SlurmdSpoolDir=$root/spool/%n
TmpFS=$root/tmp/%n
SlurmctldPidFile=$root/slurmctld.pid
SlurmdPidFile=$root/slurmd.%h.pid
SlurmctldLogFile=$root/log/slurmctld.log
SlurmdLogFile=$root/log/slurmd.%h.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=300
GresTypes=gpu
$7
PartitionName=debug Nodes=$6 Default=YES MaxTime=INFINITE State=UP
CONF
  # Two stand-in GPUs per node, so that the job scripts' --gpus-per-task=1 is satisfied unchanged
  # on a machine without any. Slurm drops a GPU without a device file; with task/none and no
  # cgroups the files are only names, so two harmless character devices serve.
  printf 'Name=gpu File=/dev/null\nName=gpu File=/dev/zero\n' >"$root/etc/gres.conf"
  export SLURM_CONF=$root/etc/slurm.conf
}

# Waits until sinfo shows COUNT nodes idle (30 s at most); prints the logs otherwise.
slurm_wait_idle() {  # root count
  local deadline=$((SECONDS + 30)) want
  want=$(printf 'idle\n%.0s' $(seq "$2"))
  while ((SECONDS <= deadline)); do
    if [[ $(timeout 5 sinfo -h -N -o %T 2>/dev/null) == "${want%$'\n'}" ]]; then
      return 0
    fi
    sleep 0.1
  done
  echo "Slurm did not come up in 30 s; logs:" >&2
  tail -n 20 "$1"/log/* >&2 || true
  return 1
}

slurm_cluster_start() {
  local root=$1
  SLURM_ROOT=$root
  slurm_munge_start "$root" || return 1
  mkdir -p "$root/spool/localhost" "$root/tmp/localhost"
  # The node description is what slurmd itself detects, under the name localhost.
  local node ctld_port slurmd_port
  node=$(slurmd -C | head -n 1 | sed 's/^NodeName=[^ ]*/NodeName=localhost NodeAddr=127.0.0.1/')
  ctld_port=$(_slurm_free_port)
  slurmd_port=$(_slurm_free_port)
  [[ $slurmd_port != "$ctld_port" ]] || slurmd_port=$((ctld_port + 1))
  slurm_write_conf "$root" localhost 127.0.0.1 "$ctld_port" "$slurmd_port" localhost \
    "$node Gres=gpu:2 State=UNKNOWN"
  slurmctld -D -i -f "$SLURM_CONF" >"$root/log/slurmctld.out" 2>&1 &
  _slurm_pids+=($!)
  slurmd -D -N localhost -f "$SLURM_CONF" >"$root/log/slurmd.out" 2>&1 &
  _slurm_pids+=($!)
  slurm_wait_idle "$root" 1
}

slurm_cluster_stop() {
  if [[ -n ${SLURM_CONF:-} && ${#_slurm_pids[@]} -gt 0 ]]; then
    # Jobs run under slurmstepd, which outlives slurmd: cancel them and give them a moment.
    timeout 5 scancel --full --quiet --partition=debug 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while ((SECONDS <= deadline)); do
      [[ -z $(timeout 5 squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  # Stop in reverse order of start (slurmd, slurmctld, munged): each can still talk to the next.
  local i pid
  for ((i = ${#_slurm_pids[@]} - 1; i >= 0; i--)); do
    pid=${_slurm_pids[i]}
    kill "$pid" 2>/dev/null || continue
    deadline=$((SECONDS + 5))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS <= deadline)); do sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  _slurm_pids=()
}

slurm_job_field() {  # id field
  timeout 10 scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# sbatch --wait polls every 10 s or so; this returns within 0.2 s of the job ending.
slurm_wait_job() {  # id timeout_seconds
  local id=$1 deadline=$((SECONDS + $2)) state=
  local last=
  while ((SECONDS <= deadline)); do
    state=$(slurm_job_field "$id" JobState)
    [[ $state == "$last" ]] || echo "job $id: ${state:-?} $(date +%T.%N)" >&2
    last=$state
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE)
        echo "$state"
        return 0
        ;;
    esac
    sleep 0.2
  done
  echo "TIMEOUT_WAITING($state)"
  return 1
}
