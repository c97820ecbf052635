#!/usr/bin/env bash
# A co-location deck's keys and its job decks (issue 33 §2, §3, §7), by the one rule of
# app/colocation_decks.hpp: the co-location deck's own keys are run.name, run.output_dir,
# [colocate] and [device]; every other key it sets, in its file or by --set, is set in every job's
# deck (a checkpoint interval there used to write nothing); the jobs' failure.stall_seconds is the
# rank's watchdog's (it used to be the co-location deck's default, 600 s) and must agree; a deck
# that is no job's (a co-location deck nested, or listing itself, or given where a job deck is
# expected) and a model-parallel job co-located on several ranks are refused before training, exit
# 2 naming the file, line and key; a co-located job's failure is named with its job.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/runs"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)

job_deck() {  # file, run name, extra lines
  printf '[run]\nname = "%s"\n[data]\npath = "%s"\npreload = false\n[model]\nfile = "%s"\n[optimizer]\nkind = "sgd"\nlr = 0.05\n[train]\nglobal_batch = 32\n%b' \
    "$2" "$data" "$WT_SOURCE_DIR/models/mlp.toml" "${3:-}" >"$1"
}
colocation_deck() {  # file, decks, extra lines
  printf '[run]\nname = "hpo"\noutput_dir = "%s/runs"\n[colocate]\ndecks = [%s]\n%b' "$dir" "$2" "${3:-}" >"$1"
}
job_deck "$dir/a.toml" job_a
job_deck "$dir/b.toml" job_b

# The co-location deck's [checkpoint] and [train] keys and a --set reach every job.
colocation_deck "$dir/hpo.toml" '"a.toml", "b.toml"' '[checkpoint]\nevery_steps = 4\n[train]\neval_every_epoch = false\n'
"$WAVETRAIN" "$dir/hpo.toml" --steps 6 --set optimizer.lr=0.02 --quiet >"$dir/keys.out" 2>&1 ||
  { cat "$dir/keys.out"; fail "the co-located run failed"; }
for job in job_a job_b; do
  run="$dir/runs/hpo/$job"
  [[ -f $run/checkpoints/step_00000004.h5 ]] ||
    fail "$job: no step-4 checkpoint: the co-location deck's checkpoint.every_steps did not reach it ($(ls "$run/checkpoints"))"
  grep -q '^lr = 0.02 ' "$run/deck.toml" || fail "$job: --set optimizer.lr did not reach it"
  grep -q '^eval_every_epoch = false ' "$run/deck.toml" || fail "$job: train.eval_every_epoch did not reach it"
  grep -q '^output_dir = "runs" ' "$run/deck.toml" || fail "$job: the co-location deck's own run.output_dir reached it"
done
echo "ok: [checkpoint], [train] and --set keys of the co-location deck applied to every job"

# A key applied to the jobs that a job cannot take names the co-location deck's line.
colocation_deck "$dir/auto.toml" '"a.toml", "b.toml"' '[schedule]\nkind = "auto"\n'
expect_status applied_key_error 2 "auto.toml:7: schedule.kind: job 'job_a' ('a.toml'): \"auto\" chooses" "$dir/auto.toml"

# The jobs' stall limits: they must agree, and the watchdog uses theirs.
job_deck "$dir/b_stall.toml" job_b '[failure]\nstall_seconds = 60\n'
colocation_deck "$dir/stall_differs.toml" '"a.toml", "b_stall.toml"'
expect_status stall_differs 2 "b_stall.toml:14: failure.stall_seconds: 'b_stall.toml' has 60 s, 'a.toml' 600 s: co-located jobs share" "$dir/stall_differs.toml"
job_deck "$dir/a3.toml" job_a '[failure]\nstall_seconds = 3\n'
job_deck "$dir/b3.toml" job_b '[failure]\nstall_seconds = 3\n'
colocation_deck "$dir/stall.toml" '"a3.toml", "b3.toml"' '[train]\nlog_every_steps = 1\n'
# Into runs/hpo, where the run above finished: --overwrite (each job's directory is replaced).
mpiexec -n 2 "$WAVETRAIN" "$dir/stall.toml" --steps $ENDLESS_STEPS --overwrite >"$dir/stall.out" 2>&1 &
job=$!
wait_lines "$dir/runs/hpo/job_a/metrics.csv" 3 60
victim=$(rank_pid "$dir/stall.toml" 1)
[[ -n $victim ]] || fail "rank 1 not found"
kill -STOP "$victim"
start=$SECONDS
wait_gone "$job" 60 || fail "the job did not end within 60 s of stopping rank 1: the jobs' stall_seconds = 3 is not the watchdog's"
rc=0
wait "$job" || rc=$?
echo "stall: exit $rc $((SECONDS - start)) s after rank 1 was stopped"
[[ $rc == 5 ]] || { cat "$dir/stall.out"; fail "exit status $rc, expected 5"; }
grep -q "wavetrain: rank 0: stalled: .*late: rank 1 (pid $victim)" "$dir/stall.out" ||
  { cat "$dir/stall.out"; fail "the watchdog did not name rank 1"; }

# Decks that are no job's.
colocation_deck "$dir/nested.toml" '"a.toml", "hpo.toml"'
expect_status nested 2 "nested.toml:5: colocate.decks: 'hpo.toml' is a co-location deck too" "$dir/nested.toml"
colocation_deck "$dir/self.toml" '"a.toml", "self.toml"'
expect_status self 2 "self.toml:5: colocate.decks: 'self.toml' is this co-location deck itself" "$dir/self.toml"
rc=0
"$WAVETRAIN" --check-data "$data" --deck "$dir/hpo.toml" >"$dir/check.out" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "hpo.toml:5: colocate.decks: --check-data --deck needs the deck of a job that trains a model; .* whose jobs are a.toml, b.toml" "$dir/check.out" ||
  { cat "$dir/check.out"; fail "--check-data --deck of a co-location deck: exit $rc"; }
rc=0
"$WAVETRAIN" "$dir/hpo.toml" --show-stages >"$dir/stages.out" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "hpo.toml:5: colocate.decks: --show-stages needs the deck of a job" "$dir/stages.out" ||
  { cat "$dir/stages.out"; fail "--show-stages of a co-location deck: exit $rc"; }
echo "ok: nested, self-listing, --check-data --deck and --show-stages refused naming the key"

# A model-parallel job co-located on 2 ranks: refused before training, naming the job and schedule.
for schedule in waves pipeline; do
  job_deck "$dir/mp.toml" job_mp "[schedule]\nkind = \"$schedule\"\n"
  colocation_deck "$dir/mp_hpo.toml" '"a.toml", "mp.toml"'
  rm -rf "$dir/runs/hpo"
  rc=0
  timeout 60 mpiexec -n 2 "$WAVETRAIN" "$dir/mp_hpo.toml" --steps 4 >"$dir/mp.out" 2>&1 || rc=$?
  grep "^wavetrain: error" "$dir/mp.out" || true
  [[ $rc == 2 ]] || { cat "$dir/mp.out"; fail "$schedule co-located on 2 ranks: exit $rc, expected 2"; }
  grep -q "mp.toml:14: schedule.kind: job 'job_mp' ('mp.toml') has schedule \"$schedule\" co-located on 2 ranks: co-location on several ranks needs data-parallel jobs" "$dir/mp.out" ||
    fail "$schedule: the message does not name the job, the schedule and the rank count"
  [[ ! -e $dir/runs/hpo/job_a/metrics.csv ]] || fail "$schedule: trained before refusing"
done
echo "ok: waves and pipeline co-located on 2 ranks refused before training"

# A co-located job's failure is named with its job, on the console and in its own log (job_a
# steps first, so it is the one to diverge).
colocation_deck "$dir/div_hpo.toml" '"a.toml", "b.toml"' '[optimizer]\nlr = 1e300\n'
rc=0
timeout 120 "$WAVETRAIN" "$dir/div_hpo.toml" --steps 6 >"$dir/div.out" 2>&1 || rc=$?
[[ $rc == 4 ]] || { cat "$dir/div.out"; fail "a diverging co-located job: exit $rc, expected 4"; }
grep -q "^\[job_a\] wavetrain: diverged: non-finite loss/gradient at step" "$dir/div.out" ||
  { cat "$dir/div.out"; fail "the divergence does not name its job"; }
grep -q "^wavetrain: diverged: non-finite loss/gradient at step" "$dir/runs/hpo/job_a/log.txt" ||
  fail "the divergence is not in the job's own log"
echo "ok: a co-located job's failure names the job"
