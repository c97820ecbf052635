#!/usr/bin/env bash
# The Slurm and PBS job scripts run by hand, outside a job (issue 33): each must stop at once with
# exit status 2 and one line saying it is not inside a job and how to submit it, instead of dying
# on the first unset SLURM_*/PBS_* variable (`unbound variable`, status 1) or starting anything.
source "$(dirname "$0")/lib/common.bash"
cd "$dir"
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
for script in "$WT_SOURCE_DIR"/jobscripts/slurm/*.sbatch "$WT_SOURCE_DIR"/jobscripts/pbs/*.pbs; do
  name=$(basename "$script")
  case $name in
    *.sbatch) expected="$name: not inside a Slurm job \(SLURM_JOB_ID is not set\): submit it with sbatch jobscripts/slurm/$name DECK" ;;
    *.pbs) expected="$name: not inside a PBS job \(PBS_JOBID is not set\): submit it with qsub -v DECK=.* jobscripts/pbs/$name" ;;
  esac
  # A clean environment, as on a login node; WAVETRAIN would be started if the script went on.
  set +e
  env -i PATH="$PATH" HOME="$dir" WAVETRAIN=/bin/false DECK="$deck" bash "$script" "$deck" \
    >"$name.out" 2>"$name.err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$name.out" "$name.err"; fail "$name outside a job: exit status $rc, expected 2"; }
  [[ $(wc -l <"$name.err") == 1 && ! -s "$name.out" ]] || { cat "$name.out" "$name.err"; fail "$name: not one line"; }
  grep -qE -- "$expected" "$name.err" || { cat "$name.err"; fail "$name: message lacks '$expected'"; }
  echo "ok $name: $(cat "$name.err")"
done
[[ -z $(ls -A . | grep -v -e '\.out$' -e '\.err$') ]] || fail "a script left files: $(ls -A .)"
echo "PASS"
