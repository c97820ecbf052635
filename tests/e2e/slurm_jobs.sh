#!/usr/bin/env bash
# End to end against a real Slurm: bring up a private one-node cluster (tests/e2e/lib/
# slurm_cluster.bash), submit the shipped job scripts unchanged with sbatch (only resources are
# overridden on the sbatch command line, as a user would), and check what they leave behind.
#   1. jobscripts/slurm/one_node.sbatch: 2 ranks, a short run; the job completes with exit 0 and
#      the run directory has metrics from 2 ranks.
#   2. jobscripts/slurm/resume.sbatch: USR1 to the batch script as Slurm sends it before the time
#      limit (scancel --signal=USR1 --batch, deterministic instead of waiting for the limit);
#      wavetrain must checkpoint and exit 75, the script must requeue the job, and the requeued
#      job must resume from the checkpoint and finish the run.
#   3. jobscripts/slurm/one_node.sbatch, SIGTERM to the batch script (scancel --signal=TERM
#      --batch): the script passes it on as USR1 (a SIGTERM to srun makes it SIGKILL the ranks);
#      checkpoint, 75, requeue, resume, finish.
#   In 2. and 3. the first run is given a step count it cannot reach (lib/chain.bash), so that
#   only the signal stops it, and the signal is sent once it has logged a training row (its
#   signal handlers are installed, it is training); the requeued run finishes a few hundred steps
#   after the checkpoint it resumes from.
# Exits 77 (ctest: skipped) where a cluster cannot be started (not root, Slurm not installed).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slurm_cluster.bash"
source "$(dirname "$0")/lib/chain.bash"
slurm_require
trap 'slurm_cluster_stop; remove_scratch "$dir"' EXIT

data=$(fashion_mnist_h5)
deck=$WT_SOURCE_DIR/inputs/fashion_mlp.toml
jobs=$WT_SOURCE_DIR/jobscripts/slurm
export WAVETRAIN                      # the job scripts take the binary from the environment
# This machine's resources instead of the scripts' GPU-node defaults: 2 ranks, 1 core each.
# --time stays well above the scripts' --signal lead time (300 s), or Slurm would signal at once,
# and above what wavetrain's --walltime stop reserves (margin + a sync interval of its slowest
# step), or resume.sbatch's --walltime would stop the resumed runs early.
small=(--ntasks-per-node=2 --cpus-per-task=1 --time=30)

slurm_cluster_start "$dir/slurm"
mkdir -p "$dir/work"
cd "$dir/work"                        # the submit directory is the job's working directory

show_job_output() {
  echo "--- job output ($1):"
  cat "$1" || true
  echo "---"
}

# 1. A complete short run on two ranks.
id=$(sbatch --parsable "${small[@]}" --output=one_node.out "$jobs/one_node.sbatch" "$deck" \
  --set "data.path=\"$data\"" --set train.log_every_steps=10 --set checkpoint.every_steps=30 \
  --steps 60 --run-dir run1)
echo "submitted one_node.sbatch as job $id"
state=$(slurm_wait_job "$id" 60) || { show_job_output one_node.out; fail "job $id: $state"; }
show_job_output one_node.out
[[ $state == COMPLETED ]] || fail "job $id ended $state, expected COMPLETED"
[[ $(slurm_job_field "$id" ExitCode) == 0:0 ]] || fail "job $id exit code $(slurm_job_field "$id" ExitCode)"
grep -q "on 2 ranks" one_node.out || fail "wavetrain did not run on 2 ranks"
grep -q "wavetrain exited with status 0" one_node.out || fail "the script did not report status 0"
grep -q '"ranks": 2' run1/summary.json || fail "summary.json does not record 2 ranks"
[[ $(last_metric run1/metrics.csv train step) == 60 ]] || fail "metrics.csv does not end at step 60"
[[ $(cat run1/checkpoints/latest) == step_00000060.h5 && -s run1/checkpoints/step_00000060.h5 ]] ||
  fail "run1/checkpoints/latest does not name a checkpoint of step 60"

# 2. The resume chain: stop on USR1 with a checkpoint, requeue, resume, finish.
# The job scripts take the binary from $WAVETRAIN: from here on the chain wrapper, which gives the
# first run no reachable end and the requeued one 200 steps past its checkpoint.
WAVETRAIN=$(chain_wavetrain 200)
id=$(sbatch --parsable "${small[@]}" --output=resume.out "$jobs/resume.sbatch" "$deck" \
  --set "data.path=\"$data\"" --set train.log_every_steps=50 --run-dir run2)
echo "submitted resume.sbatch as job $id"
# A training row: the ranks have installed their signal handlers and are training.
(wait_for_line run2/metrics.csv "^train," 120) || { show_job_output resume.out; fail "job $id: no training row"; }
# What Slurm does at --signal=B:USR1@300 before the time limit, delivered now.
scancel --signal=USR1 --batch "$id"
state=$(slurm_wait_job "$id" 180) || { show_job_output resume.out; fail "job $id: $state"; }
show_job_output resume.out
[[ $state == COMPLETED ]] || fail "job $id ended $state, expected COMPLETED"
[[ $(slurm_job_field "$id" ExitCode) == 0:0 ]] || fail "job $id exit code $(slurm_job_field "$id" ExitCode)"
[[ $(slurm_job_field "$id" Restarts) == 1 ]] || fail "job $id was requeued $(slurm_job_field "$id" Restarts) times, expected 1"
grep -q "wavetrain exited with status 75" resume.out || fail "the first job did not stop with status 75"
grep -q "requeueing job $id" resume.out || fail "the script did not requeue the job"
grep -q "wavetrain job $id (restart 1)" resume.out || fail "the requeued job did not run"
stopped=$(sed -n 's/^wavetrain: stopping at step \([0-9]*\) on signal.*/\1/p' resume.out)
resumed=$(sed -n 's/^wavetrain: resumed from .* at step \([0-9]*\)$/\1/p' resume.out)
echo "stopped at step $stopped, resumed at step $resumed"
[[ -n $stopped && $stopped -gt 0 ]] || fail "no stop on the signal"
[[ $resumed == "$stopped" ]] || fail "resumed at step '$resumed', not at the checkpoint of step $stopped"
grep -q "wavetrain exited with status 0" resume.out || fail "the resumed run did not finish"
steps=$(chain_final_steps run2)
[[ $steps == $((stopped + 200)) ]] || fail "the requeued run aimed at step $steps, not $((stopped + 200))"
[[ $(last_metric run2/metrics.csv train step) == "$steps" ]] || fail "metrics.csv does not end at step $steps"

# 3. SIGTERM to the batch script, then the same requeue and resume.
id=$(sbatch --parsable "${small[@]}" --output=term.out "$jobs/one_node.sbatch" "$deck" \
  --set "data.path=\"$data\"" --set train.log_every_steps=50 --run-dir run3)
echo "submitted one_node.sbatch as job $id"
(wait_for_line run3/metrics.csv "^train," 120) || { show_job_output term.out; fail "job $id: no training row"; }
scancel --signal=TERM --batch "$id"
state=$(slurm_wait_job "$id" 180) || { show_job_output term.out; fail "job $id: $state"; }
show_job_output term.out
[[ $state == COMPLETED ]] || fail "job $id ended $state, expected COMPLETED"
grep -q "on signal 10" term.out || fail "the script did not pass SIGTERM on as USR1"
grep -q "wavetrain exited with status 75" term.out || fail "the SIGTERMed job did not report 75"
grep -q "wavetrain job $id (restart 1)" term.out || fail "the SIGTERMed job was not requeued"
grep -q "resumed from" term.out || fail "the requeued job did not resume"
steps=$(chain_final_steps run3)
[[ $(last_metric run3/metrics.csv train step) == "$steps" ]] || fail "run3 does not end at step $steps"
if ls -A | grep -q '^.wavetrain-status'; then fail "a status file was left in the submit directory"; fi
