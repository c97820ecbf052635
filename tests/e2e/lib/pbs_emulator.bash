# A PBS stand-in for the end-to-end tests (sourced, not run by ctest). Debian 12 has no PBS
# server, so this runs a job script the way a PBS Pro server would, closely enough to catch the
# mistakes that matter in a job script:
#   - #PBS directives are read up to the first command line; qsub-style options override them;
#   - the job gets a fresh environment (PBS passes only -v variables unless -V), starts in $HOME
#     (a scratch directory here), so a missing `cd "$PBS_O_WORKDIR"` breaks relative paths;
#   - PBS_JOBID, PBS_JOBNAME, PBS_O_WORKDIR, PBS_NODEFILE (one line per MPI rank: select chunks
#     x mpiprocs, or nodes x ppn), PBS_NP, PBS_ENVIRONMENT=PBS_BATCH and friends are set;
#   - the script runs as a spool copy (as PBS does: $0 is not the submitted file);
#   - the walltime is enforced with timeout, which kills the job's process group;
#   - output goes to <job name>.o<number> (and .e<number> without -j oe) in PBS_O_WORKDIR.
# A qsub shim on the jobs' PATH records submissions made from inside a job (the test runs them
# with pbs_run_submission, playing the server), and a qstat shim answers `qstat -f JOBID` with
# the job's name and resources.
#
#   pbs_emulator_init DIR [VAR=VALUE...]   state under DIR; VAR=VALUE go into every job, like a
#                                          site's login profile would set them
#   PBS_EMU_HOSTS="a b"                     the hosts the chunks of a select run on, in turn
#                                          (default localhost); PBS_EMU_LAUNCH=(CMD...) runs the
#                                          batch shell through CMD (on the first host)
#   pbs_run [-N name] [-l res[,res]] [-v VAR[=VALUE][,...]] [-j oe] SCRIPT [VAR=VALUE...]
#       runs the job in the foreground from the current directory (its PBS_O_WORKDIR) and
#       returns its exit status (124 when the walltime killed it); sets PBS_EMU_JOBID and
#       PBS_EMU_OUTPUT (the output file's path)
#   pbs_submissions                         how many qsub calls jobs have made so far
#   pbs_run_submission N                    runs the Nth recorded qsub (1-based) as pbs_run would
#   pbs_qsig SIGNAL JOBID                   signals a running job's batch script (as qsig does)
#   pbs_qdel JOBID [KILL_DELAY]             SIGTERM to every process of the job, SIGKILL to what
#                                          is left KILL_DELAY (default 10) seconds later (qdel)

pbs_emulator_init() {
  PBS_EMU_DIR=$1
  shift
  PBS_EMU_SITE_ENV=("$@")
  mkdir -p "$PBS_EMU_DIR"/{bin,home,jobs,spool}
  : >"$PBS_EMU_DIR/jobs/submissions"
  echo 0 >"$PBS_EMU_DIR/jobs/last_id"
  # qsub: record the working directory and the arguments (one per line), answer with a job id.
  cat >"$PBS_EMU_DIR/bin/qsub" <<EOF
#!/bin/bash
jobs=$PBS_EMU_DIR/jobs
id=\$((\$(cat "\$jobs/last_id") + 1))
echo "\$id" >"\$jobs/last_id"
{ pwd; printf '%s\n' "\$@"; } >"\$jobs/qsub.\$id"
echo "\$id" >>"\$jobs/submissions"
echo "\$id.pbs-emulator"
EOF
  # qstat -f JOBID: the job's attributes as pbs_run recorded them.
  cat >"$PBS_EMU_DIR/bin/qstat" <<EOF
#!/bin/bash
[[ \${1:-} == -f && -n \${2:-} ]] || { echo "qstat (emulated): only -f JOBID" >&2; exit 2; }
cat "$PBS_EMU_DIR/jobs/\${2%%.*}.attributes" 2>/dev/null || { echo "qstat: Unknown Job Id \$2" >&2; exit 153; }
EOF
  chmod +x "$PBS_EMU_DIR/bin/qsub" "$PBS_EMU_DIR/bin/qstat"
}

# HH:MM:SS, MM:SS or SS -> seconds.
pbs_emu_seconds() {
  local -a p
  IFS=: read -ra p <<<"$1"
  local s=0 x
  for x in "${p[@]}"; do s=$((s * 60 + 10#$x)); done
  echo "$s"
}

# Ranks for a resource list: select=N:..:mpiprocs=M[+N:..] (PBS Pro) or nodes=N:ppn=M (Torque).
pbs_emu_ranks() {  # select nodes
  local ranks=0 chunk count mpiprocs
  if [[ -n $1 ]]; then
    IFS=+ read -ra chunks <<<"$1"
    for chunk in "${chunks[@]}"; do
      count=1
      [[ $chunk =~ ^([0-9]+)(:|$) ]] && count=${BASH_REMATCH[1]}
      mpiprocs=1
      [[ $chunk =~ (^|:)mpiprocs=([0-9]+) ]] && mpiprocs=${BASH_REMATCH[2]}
      ranks=$((ranks + count * mpiprocs))
    done
  elif [[ -n $2 ]]; then
    count=1
    [[ $2 =~ ^([0-9]+)(:|$) ]] && count=${BASH_REMATCH[1]}
    mpiprocs=1
    [[ $2 =~ :ppn=([0-9]+) ]] && mpiprocs=${BASH_REMATCH[1]}
    ranks=$((count * mpiprocs))
  else
    ranks=1
  fi
  echo "$ranks"
}

# The node file: one line per rank, naming its chunk's host. Chunk c runs on the c-th name of
# PBS_EMU_HOSTS (cyclically; default: every chunk on localhost).
pbs_emu_nodefile() {  # select nodes
  local -a hosts=(${PBS_EMU_HOSTS:-localhost}) chunks
  local chunk count mpiprocs c=0 i j
  if [[ -n $1 ]]; then
    IFS=+ read -ra chunks <<<"$1"
  else
    chunks=("${2:-1}")
    [[ $2 =~ :ppn=([0-9]+) ]] && chunks=("${2%%:*}:mpiprocs=${BASH_REMATCH[1]}")
  fi
  for chunk in "${chunks[@]}"; do
    count=1
    [[ $chunk =~ ^([0-9]+)(:|$) ]] && count=${BASH_REMATCH[1]}
    mpiprocs=1
    [[ $chunk =~ (^|:)mpiprocs=([0-9]+) ]] && mpiprocs=${BASH_REMATCH[2]}
    for ((i = 0; i < count; i++, c++)); do
      for ((j = 0; j < mpiprocs; j++)); do echo "${hosts[c % ${#hosts[@]}]}"; done
    done
  done
}

pbs_run() {
  : "${PBS_EMU_DIR:?call pbs_emulator_init first}"
  local -a directives=() options=() vars=()
  local script line id=${PBS_EMU_NEXT_ID:-}
  # Options before the script, as qsub takes them.
  while [[ $# -gt 0 && $1 == -* ]]; do
    [[ $# -ge 2 ]] || { echo "pbs_run: $1 needs a value" >&2; return 2; }
    options+=("$1" "$2")
    shift 2
  done
  script=${1:?usage: pbs_run [qsub options] SCRIPT [VAR=VALUE...]}
  shift
  [[ -f $script ]] || { echo "qsub: script file:: No such file or directory ($script)" >&2; return 2; }
  # #PBS directives: PBS reads them up to the first line that is neither blank nor a comment.
  while IFS= read -r line; do
    if [[ $line =~ ^#PBS[[:space:]]+(-[A-Za-z])[[:space:]]*(.*)$ ]]; then
      directives+=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]%%[[:space:]]}")
    elif [[ -n ${line//[[:space:]]/} && $line != \#* ]]; then
      break
    fi
  done <"$script"
  local name walltime="" select="" nodes="" place="" join="" res opt value i
  name=$(basename "$script")
  local -a all=("${directives[@]}" "${options[@]}")  # later wins: the command line over #PBS
  for ((i = 0; i < ${#all[@]}; i += 2)); do
    opt=${all[i]} value=${all[i + 1]}
    case $opt in
      -N) name=$value ;;
      -j) join=$value ;;
      -v) IFS=, read -ra more <<<"$value"; vars+=("${more[@]}") ;;
      -l)
        IFS=, read -ra more <<<"$value"
        for res in "${more[@]}"; do
          case $res in
            walltime=*) walltime=${res#walltime=} ;;
            select=*) select=${res#select=} ;;
            nodes=*) nodes=${res#nodes=} ;;
            place=*) place=${res#place=} ;;
          esac
        done
        ;;
    esac
  done
  # -v VAR without a value takes it from the submitter's environment.
  for i in "${!vars[@]}"; do
    [[ ${vars[i]} == *=* ]] || vars[i]="${vars[i]}=${!vars[i]-}"
  done
  if [[ -z $id ]]; then
    id=$(($(cat "$PBS_EMU_DIR/jobs/last_id") + 1))
    echo "$id" >"$PBS_EMU_DIR/jobs/last_id"
  fi
  local jobid="$id.pbs-emulator" ranks seconds=0 nodefile="$PBS_EMU_DIR/jobs/$id.nodes"
  ranks=$(pbs_emu_ranks "$select" "$nodes")
  pbs_emu_nodefile "$select" "$nodes" >"$nodefile"
  [[ -n $walltime ]] && seconds=$(pbs_emu_seconds "$walltime")
  {
    echo "Job Id: $jobid"
    echo "    Job_Name = $name"
    [[ -n $walltime ]] && echo "    Resource_List.walltime = $walltime"
    [[ -n $select ]] && echo "    Resource_List.select = $select"
    [[ -n $nodes ]] && echo "    Resource_List.nodes = $nodes"
    [[ -n $place ]] && echo "    Resource_List.place = $place"
    echo "    Resource_List.mpiprocs = $ranks"
  } >"$PBS_EMU_DIR/jobs/$id.attributes"
  cp "$script" "$PBS_EMU_DIR/spool/$id.SC"
  local workdir=$PWD out err
  out="$workdir/$name.o$id"
  err="$workdir/$name.e$id"
  [[ $join == oe ]] && err=$out
  : >"$out"
  local -a env=(
    HOME="$PBS_EMU_DIR/home" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/bash
    PATH="$PBS_EMU_DIR/bin:$PATH" TMPDIR="${TMPDIR:-/tmp}"
    PBS_JOBID="$jobid" PBS_JOBNAME="$name" PBS_O_WORKDIR="$workdir" PBS_NODEFILE="$nodefile"
    PBS_NP="$ranks" PBS_ENVIRONMENT=PBS_BATCH PBS_QUEUE=workq PBS_O_HOST="$(hostname)"
    PBS_O_HOME="$HOME" PBS_O_PATH="$PATH" PBS_O_SHELL="${SHELL:-/bin/bash}"
    PBS_JOBDIR="$PBS_EMU_DIR/home"
    "${PBS_EMU_SITE_ENV[@]}" "${vars[@]}" "$@"
  )
  local -a limit=()
  ((seconds > 0)) && limit=(timeout --kill-after=10 "$seconds")
  local status=0
  # The batch shell records its pid so that pbs_qsig can reach it.
  (cd "$PBS_EMU_DIR/home" &&
    "${limit[@]}" "${PBS_EMU_LAUNCH[@]}" env -i "${env[@]}" bash -c 'echo $$ >"$1"; exec bash "$2"' pbs-job \
      "$PBS_EMU_DIR/jobs/$id.pid" "$PBS_EMU_DIR/spool/$id.SC" >>"$out" 2>>"$err") || status=$?
  if ((status == 124 && seconds > 0)); then
    echo "=>> PBS: job killed: walltime $seconds exceeded limit $seconds" >>"$err"
  fi
  rm -f "$PBS_EMU_DIR/jobs/$id.pid"
  PBS_EMU_JOBID=$jobid
  PBS_EMU_OUTPUT=$out
  return "$status"
}

pbs_submissions() { wc -l <"$PBS_EMU_DIR/jobs/submissions"; }

pbs_run_submission() {  # N: the Nth qsub made by a job, run from the directory it was made in
  local id
  id=$(sed -n "${1}p" "$PBS_EMU_DIR/jobs/submissions")
  [[ -n $id ]] || { echo "pbs_run_submission: no submission $1" >&2; return 2; }
  local -a args
  mapfile -t args <"$PBS_EMU_DIR/jobs/qsub.$id"
  local back=$PWD status=0
  cd "${args[0]}"
  PBS_EMU_NEXT_ID=$id pbs_run "${args[@]:1}" || status=$?
  cd "$back"
  return "$status"
}

pbs_qsig() {  # SIGNAL JOBID
  local pidfile="$PBS_EMU_DIR/jobs/${2%%.*}.pid"
  [[ -s $pidfile ]] || { echo "qsig: job $2 is not running" >&2; return 1; }
  kill -s "$1" "$(cat "$pidfile")"
}

# The job's processes: the batch shell and all its descendants (PBS finds them by session; the
# ranks are in process groups of their own).
pbs_job_processes() {  # PID
  local child
  echo "$1"
  for child in $(pgrep -P "$1"); do pbs_job_processes "$child"; done
}

pbs_qdel() {  # JOBID [KILL_DELAY]: as a PBS Pro MOM deletes a running job
  local pidfile="$PBS_EMU_DIR/jobs/${1%%.*}.pid"
  [[ -s $pidfile ]] || { echo "qdel: job $1 is not running" >&2; return 1; }
  local -a procs
  mapfile -t procs < <(pbs_job_processes "$(cat "$pidfile")")
  kill -TERM "${procs[@]}" 2>/dev/null || true
  (sleep "${2:-10}"; kill -KILL "${procs[@]}" 2>/dev/null || true) >/dev/null 2>&1 &
}
