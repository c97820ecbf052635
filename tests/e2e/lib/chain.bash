# A wavetrain for the job-chain tests (sourced after common.bash, not run by ctest).
#
# A chain test stops a run (a signal, a walltime), lets the job script start wavetrain again, and
# checks that the new run resumes and finishes. A fixed --steps cannot serve both ends on every
# machine: 5,000 mlp steps once finished in 2 s, before the test's scancel landed. The launchers
# (jobscripts/local.sh, slurm/*.sbatch, pbs/*.pbs) take the binary from $WAVETRAIN, so these
# tests point it at this wrapper, which adds the step count itself (the tests give none):
#   - a run that starts without a checkpoint in its run directory (the chain's first) gets
#     $ENDLESS_STEPS: it can only stop when the test stops it;
#   - a run that resumes gets --steps FIRST + EXTRA, FIRST being the step of the checkpoint the
#     chain's first resume found. That count is kept in RUN_DIR.final_steps so that every later
#     run of the chain (one stopped by the walltime again) aims at the same end.
# The wrapper execs wavetrain, so each rank is still a process named wavetrain.
#
#   chain_wavetrain EXTRA          writes the wrapper to $dir/chain-wavetrain-EXTRA; prints its path
#   chain_final_steps RUN_DIR      the step count the chain ends at (once it has resumed)

chain_wavetrain() {  # extra_steps
  local wrapper=$dir/chain-wavetrain-$1  # one per step count: chains of a test may differ
  cat >"$wrapper" <<EOF
#!/bin/bash
# Written by tests/e2e/lib/chain.bash: wavetrain with the step count of a test's job chain.
real='$WAVETRAIN' extra=$1 endless=$ENDLESS_STEPS
EOF
  cat >>"$wrapper" <<'EOF'
args=("$@") run=
for ((i = 0; i + 1 < ${#args[@]}; i++)); do [[ ${args[i]} == --run-dir ]] && run=${args[i + 1]}; done
[[ -n $run ]] || { echo "chain-wavetrain: no --run-dir among the arguments" >&2; exit 2; }
[[ -s $run/checkpoints/latest ]] || exec "$real" "$@" --steps "$endless"
final=$run.final_steps
if [[ ! -s $final ]]; then
  first=$(sed -n 's/^step_0*\([0-9][0-9]*\)\.h5$/\1/p' "$run/checkpoints/latest")
  [[ -n $first ]] || { echo "chain-wavetrain: $run/checkpoints/latest names no step" >&2; exit 2; }
  # Every rank runs this; they compute the same number, and the rename makes the file whole.
  echo $((first + extra)) >"$final.$$" && mv -f "$final.$$" "$final"
fi
exec "$real" "$@" --steps "$(cat "$final")"
EOF
  chmod +x "$wrapper"
  echo "$wrapper"
}

chain_final_steps() {  # run_dir
  [[ -s $1.final_steps ]] || fail "$1 never resumed (no $1.final_steps)"
  cat "$1.final_steps"
}
