#!/usr/bin/env bash
# End to end: the PBS job scripts (jobscripts/pbs/) run as a PBS server would run them
# (tests/e2e/lib/pbs_emulator.bash: fresh environment, start in $HOME, PBS_* variables, a node
# file from the select line, walltime enforced, qsub/qstat shims), from a directory laid out like
# a wavetrain checkout; only resources and -v variables are given, as a user would on qsub.
#   1. one_node.pbs: 2 ranks, a short run; exit 0, metrics and summary from 2 ranks, a checkpoint.
#   2. The same script without `cd "$PBS_O_WORKDIR"` must fail: the job starts in $HOME, where the
#      relative deck path does not exist (proves the harness catches that mistake).
#   3. resume.pbs with a 20 s walltime: wavetrain gets it as --walltime (from qstat -f), saves a
#      checkpoint and exits 75 before it runs out; the script resubmits itself with qsub; the
#      resubmitted jobs (run here, playing the server) resume where the previous one stopped
#      until the run finishes.
#   4. one_node.pbs stopped by `qsig -s USR1`: checkpoint, exit 75, resubmission, resume, finish.
#   5. one_node.pbs deleted by qdel (SIGTERM to every process of the job, mpirun included, SIGKILL
#      10 s later): mpirun exits 1, but the script takes rank 0's 75, resubmits before the
#      SIGKILL, and the resubmitted job resumes and finishes.
# In 3.-5. the first job's run is given a step count it cannot reach (lib/chain.bash), so that only
# the walltime, the signal or qdel stops it, whatever the machine's speed; it is signalled once it
# has logged a training row; the resubmitted runs finish a set number of steps past the first
# checkpoint they resume from.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/pbs_emulator.bash"
source "$(dirname "$0")/lib/chain.bash"
data=$(fashion_mnist_h5)

# What a site's login profile would export in every job: Open MPI's settings for this container.
pbs_emulator_init "$dir/pbs" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none
mkdir -p "$dir/work"
cd "$dir/work"                           # the submit directory: PBS_O_WORKDIR
ln -s "$WT_SOURCE_DIR/jobscripts" "$WT_SOURCE_DIR/inputs" "$WT_SOURCE_DIR/models" .
deck=inputs/fashion_mlp.toml             # relative, as users write it
small=select=1:ncpus=2:mpiprocs=2        # this machine instead of the scripts' 4-GPU nodes

show() { echo "--- job output ($1):"; cat "$1" || true; echo "---"; }

# 1. A complete short run on two ranks.
status=0
pbs_run -l "$small,walltime=00:01:00" -v "DECK=$deck,WAVETRAIN=$WAVETRAIN,WT_ARGS=--set \
data.path=\"$data\" --set train.log_every_steps=10 --set checkpoint.every_steps=30 --steps 60 \
--run-dir run1" jobscripts/pbs/one_node.pbs || status=$?
show "$PBS_EMU_OUTPUT"
[[ $status == 0 ]] || fail "one_node.pbs exited with status $status"
[[ $PBS_EMU_OUTPUT == "$dir/work/wavetrain.o"* ]] || fail "output not in wavetrain.o<N>: $PBS_EMU_OUTPUT"
grep -q "on 2 ranks" "$PBS_EMU_OUTPUT" || fail "wavetrain did not run on 2 ranks"
grep -q "wavetrain exited with status 0" "$PBS_EMU_OUTPUT" || fail "the script did not report status 0"
grep -q '"ranks": 2' run1/summary.json || fail "summary.json does not record 2 ranks"
[[ $(last_metric run1/metrics.csv train step) == 60 ]] || fail "metrics.csv does not end at step 60"
[[ $(cat run1/checkpoints/latest) == step_00000060.h5 && -s run1/checkpoints/step_00000060.h5 ]] ||
  fail "run1/checkpoints/latest does not name a checkpoint of step 60"
[[ $(pbs_submissions) == 0 ]] || fail "a finished job resubmitted itself"

# 2. Negative control: without the cd, the job runs in $HOME and cannot find the deck.
grep -v '^cd "$PBS_O_WORKDIR"' jobscripts/pbs/one_node.pbs >no_cd.pbs
! cmp -s no_cd.pbs jobscripts/pbs/one_node.pbs || fail "one_node.pbs has no cd \"\$PBS_O_WORKDIR\" line"
status=0
pbs_run -l "$small,walltime=00:01:00" -v "DECK=$deck,WAVETRAIN=$WAVETRAIN,WT_ARGS=--steps 60 \
--run-dir run_no_cd" no_cd.pbs || status=$?
show "$PBS_EMU_OUTPUT"
[[ $status == 2 ]] || fail "without cd \"\$PBS_O_WORKDIR\" the job exited $status, expected 2 (bad input)"
grep -q "$deck" "$PBS_EMU_OUTPUT" || fail "the error does not name the deck"
[[ ! -e run_no_cd ]] || fail "the job without cd still found its way to the submit directory"

# 3. The resume chain under a walltime: stop with 75 before it runs out, resubmit, resume, finish.
# A margin of 14 of the 20 s leaves each job about 6 s of training. The first job's run has no
# reachable end (a fixed 1200 steps once all fit in the walltime on a faster machine), so the
# walltime must stop it; the resubmitted ones aim at 300 steps past the first resume's
# checkpoint, which may take more than one job under load (the controller stops early after a
# slow step): MAX_RESTARTS leaves room for that.
chained=$(chain_wavetrain 300)
status=0
pbs_run -l "$small,walltime=00:00:20" -v "DECK=$deck,WAVETRAIN=$chained,MAX_RESTARTS=20,\
WT_ARGS=--set data.path=\"$data\" --set checkpoint.walltime_margin=14 --set train.global_batch=512 \
--set train.log_every_steps=100 --run-dir run2" jobscripts/pbs/resume.pbs ||
  status=$?
show "$PBS_EMU_OUTPUT"
[[ $status == 0 ]] || fail "resume.pbs exited with status $status"
grep -q "time limit 00:00:20" "$PBS_EMU_OUTPUT" || fail "the script did not find the walltime"
grep -q "the wall time runs out" "$PBS_EMU_OUTPUT" || fail "wavetrain did not stop for the walltime"
grep -q "wavetrain exited with status 75" "$PBS_EMU_OUTPUT" || fail "the first job did not exit 75"
stopped=$(sed -n 's/^wavetrain: stopping at step \([0-9]*\): the wall time.*/\1/p' "$PBS_EMU_OUTPUT")
[[ -n $stopped && $stopped -gt 0 ]] || fail "no walltime stop"
links=1
while (($(pbs_submissions) >= links)); do
  ((links <= 20)) || fail "more resubmissions than MAX_RESTARTS=20"
  grep -q "submitted .* to resume" "$PBS_EMU_OUTPUT" || fail "a resubmission the job did not report"
  status=0
  pbs_run_submission "$links" || status=$?
  show "$PBS_EMU_OUTPUT"
  [[ $status == 0 ]] || fail "resubmitted job $links exited with status $status"
  grep -q "(restart $links) on localhost: 2 ranks" "$PBS_EMU_OUTPUT" ||
    fail "resubmitted job $links lost its restart count or its resources"
  resumed=$(sed -n 's/^wavetrain: resumed from .* at step \([0-9]*\)$/\1/p' "$PBS_EMU_OUTPUT")
  [[ $resumed == "$stopped" ]] || fail "job $links resumed at step '$resumed', not at $stopped"
  stopped=$(sed -n 's/^wavetrain: stopping at step \([0-9]*\): the wall time.*/\1/p' "$PBS_EMU_OUTPUT")
  links=$((links + 1))
done
echo "resume chain: $links jobs"
grep -q "wavetrain exited with status 0" "$PBS_EMU_OUTPUT" || fail "the last job did not finish"
steps=$(chain_final_steps run2)
[[ $(last_metric run2/metrics.csv train step) == "$steps" ]] || fail "metrics.csv does not end at step $steps"

# 4. qsig -s USR1 (what a site's pre-walltime hook or a user would send) to one_node.pbs.
before=$(pbs_submissions)
chained=$(chain_wavetrain 200)
pbs_run -l "$small,walltime=00:01:00" -v "DECK=$deck,WAVETRAIN=$chained,WT_ARGS=--set \
data.path=\"$data\" --set train.log_every_steps=50 --run-dir run3" \
  jobscripts/pbs/one_node.pbs &
job=$!
# A training row: the ranks have installed their signal handlers and are training. (The job's
# walltime, 60 s, bounds the wait.)
wait_for_line run3/metrics.csv '^train,' 60 "$job"
pbs_qsig USR1 "$(($(cat "$PBS_EMU_DIR/jobs/last_id"))).pbs-emulator"
status=0
wait "$job" || status=$?
out=$(ls -t wavetrain.o* | head -n 1)
show "$out"
[[ $status == 0 ]] || fail "the signalled one_node.pbs exited with status $status"
grep -q "on signal 10" "$out" || fail "wavetrain did not stop on USR1"
[[ $(pbs_submissions) == $((before + 1)) ]] || fail "the signalled job did not resubmit itself"
status=0
pbs_run_submission $((before + 1)) || status=$?
show "$PBS_EMU_OUTPUT"
[[ $status == 0 ]] || fail "the resubmitted job exited with status $status"
grep -q "(restart 1) on localhost: 2 ranks" "$PBS_EMU_OUTPUT" || fail "resubmitted with other resources"
grep -q "resumed from" "$PBS_EMU_OUTPUT" || fail "the resubmitted job did not resume"
steps=$(chain_final_steps run3)
[[ $(last_metric run3/metrics.csv train step) == "$steps" ]] || fail "run3 does not end at step $steps"

# 5. qdel: SIGTERM to the batch shell, mpirun and the ranks alike; SIGKILL 10 s later.
before=$(pbs_submissions)
pbs_run -l "$small,walltime=00:01:00" -v "DECK=$deck,WAVETRAIN=$chained,WT_ARGS=--set \
data.path=\"$data\" --set train.log_every_steps=50 --run-dir run4" \
  jobscripts/pbs/one_node.pbs &
job=$!
wait_for_line run4/metrics.csv '^train,' 60 "$job"
t0=$(date +%s.%N)
pbs_qdel "$(($(cat "$PBS_EMU_DIR/jobs/last_id"))).pbs-emulator" 10
status=0
wait "$job" || status=$?
seconds=$(echo "$(date +%s.%N) - $t0" | bc)
out=$(ls -t wavetrain.o* | head -n 1)
show "$out"
echo "ROW | one_node.pbs, qdel | $status | $seconds s | $(grep -o 'mpirun exited with status.*' "$out")"
[[ $status == 0 ]] || fail "the deleted one_node.pbs exited with status $status"
(($(echo "$seconds < 10" | bc))) || fail "the deleted job took $seconds s, past the kill delay"
grep -q "on signal 15" "$out" || fail "wavetrain did not stop on SIGTERM"
grep -q "mpirun exited with status 1; wavetrain's rank 0 exited with 75" "$out" ||
  fail "the script did not take rank 0's 75 over mpirun's 1"
[[ $(pbs_submissions) == $((before + 1)) ]] || fail "the deleted job did not resubmit itself"
if ls -A | grep -q '^.wavetrain-status'; then fail "a status file was left in the submit directory"; fi
status=0
pbs_run_submission $((before + 1)) || status=$?
show "$PBS_EMU_OUTPUT"
[[ $status == 0 ]] || fail "the job resubmitted after qdel exited with status $status"
grep -q "resumed from" "$PBS_EMU_OUTPUT" || fail "the job resubmitted after qdel did not resume"
steps=$(chain_final_steps run4)
[[ $(last_metric run4/metrics.csv train step) == "$steps" ]] || fail "run4 does not end at step $steps"
