#!/usr/bin/env bash
# jobscripts/local.sh's own arguments (issue 17, minor), with a stand-in mpirun and wavetrain on
# PATH so that only the script is under test:
#   1. WT_RANKS=0 and WT_RANKS=two are refused (exit 2, a message naming WT_RANKS), nothing run.
#   2. A restart gets the wall time left, not the same --walltime again: the stand-in's first run
#      takes at least 2 s (sleep: a lower bound, not a race) and exits 75; the second run must be
#      given at most budget - 2 s, and no --restart-from (the run resumes its own checkpoints).
#   3. A budget used up by the first run: no restart, exit 75 with a message.
source "$(dirname "$0")/lib/common.bash"
cd "$dir"
mkdir bin
cat >bin/mpirun <<'SH'
#!/usr/bin/env bash
# mpirun -n N PROGRAM ARGS...: runs PROGRAM once, as one rank.
shift 2
exec "$@"
SH
cat >bin/fake_wavetrain <<'SH'
#!/usr/bin/env bash
# Records its arguments, one run per line; the first run sleeps $FAKE_FIRST_SECONDS and exits 75.
echo "$*" >>"$FAKE_LOG"
runs=$(wc -l <"$FAKE_LOG")
if ((runs == 1)); then sleep "$FAKE_FIRST_SECONDS"; exit 75; fi
exit 0
SH
chmod +x bin/mpirun bin/fake_wavetrain
export PATH="$dir/bin:$PATH" WAVETRAIN="$dir/bin/fake_wavetrain" FAKE_LOG="$dir/runs.txt"
launch() { timeout 60 bash "$WT_SOURCE_DIR/jobscripts/local.sh" deck.toml "$@"; }

# 1. Bad rank counts.
for bad in 0 two -1 007x; do
  rm -f runs.txt
  status=0
  WT_RANKS=$bad launch >out.txt 2>&1 || status=$?
  cat out.txt
  [[ $status == 2 ]] || fail "WT_RANKS='$bad': status $status, expected 2"
  grep -q "local.sh: error: WT_RANKS=$bad: the number of ranks must be a whole number, at least 1" \
    out.txt || fail "WT_RANKS='$bad': no message naming WT_RANKS"
  [[ ! -e runs.txt ]] || fail "WT_RANKS='$bad': wavetrain was started anyway"
done
echo "ok: WT_RANKS=0, two, -1 and 007x refused with status 2"

# 2. The restart gets the time left.
rm -f runs.txt
status=0
WT_RANKS=1 FAKE_FIRST_SECONDS=2 launch --walltime 1:00:00 --restart-from old/step_00000010.h5 \
  --steps 5 >out.txt 2>&1 || status=$?
cat out.txt runs.txt
[[ $status == 0 ]] || fail "status $status, expected 0 after the restart"
[[ $(wc -l <runs.txt) == 2 ]] || fail "expected two runs"
first=$(sed -n 1p runs.txt)
second=$(sed -n 2p runs.txt)
[[ $first == *"--walltime 1:00:00 --restart-from old/step_00000010.h5 --steps 5"* ]] ||
  fail "the first run's options were changed: $first"
[[ $second != *--restart-from* ]] || fail "the restart was given --restart-from again: $second"
[[ $second == *"--steps 5"* ]] || fail "the restart lost --steps: $second"
left=$(sed -n 's/.*--walltime \([0-9]*\).*/\1/p' <<<"$second")
[[ -n $left ]] || fail "the restart has no --walltime in seconds: $second"
((left > 0 && left <= 3600 - 2)) || fail "the restart got --walltime $left, expected at most 3598"
echo "ok: the restart got --walltime $left of 3600 s, and no --restart-from"

# 3. Nothing left after the first run.
rm -f runs.txt
status=0
WT_RANKS=1 FAKE_FIRST_SECONDS=2 launch --walltime=1 >out.txt 2>&1 || status=$?
cat out.txt
[[ $status == 75 ]] || fail "status $status, expected 75"
[[ $(wc -l <runs.txt) == 1 ]] || fail "restarted with no wall time left"
grep -q "the wall time (1 s) is used up: not restarting" out.txt || fail "no message"
echo "ok: no restart once the wall time is used up"
