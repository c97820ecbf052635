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
# Exits 77 (ctest: skipped) where a cluster cannot be started (not root, Slurm not installed).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slurm_cluster.bash"
slurm_require
trap 'slurm_cluster_stop; rm -rf "$dir"' EXIT

data=$(fashion_mnist_h5)
deck=$WT_SOURCE_DIR/inputs/fashion_mlp.toml
jobs=$WT_SOURCE_DIR/jobscripts/slurm
export WAVETRAIN                      # the job scripts take the binary from the environment
# This machine's resources instead of the scripts' GPU-node defaults: 2 ranks, 1 core each.
small=(--ntasks-per-node=2 --cpus-per-task=1 --time=3)

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
  --set "data.path=\"$data\"" --set train.log_every_steps=10 --steps 60 --run-dir run1)
echo "submitted one_node.sbatch as job $id"
state=$(slurm_wait_job "$id" 60) || { show_job_output one_node.out; fail "job $id: $state"; }
show_job_output one_node.out
[[ $state == COMPLETED ]] || fail "job $id ended $state, expected COMPLETED"
[[ $(slurm_job_field "$id" ExitCode) == 0:0 ]] || fail "job $id exit code $(slurm_job_field "$id" ExitCode)"
grep -q "on 2 ranks" one_node.out || fail "wavetrain did not run on 2 ranks"
grep -q "wavetrain exited with status 0" one_node.out || fail "the script did not report status 0"
grep -q '"ranks": 2' run1/summary.json || fail "summary.json does not record 2 ranks"
[[ $(last_metric run1/metrics.csv train step) == 60 ]] || fail "metrics.csv does not end at step 60"
