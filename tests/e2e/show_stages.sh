#!/usr/bin/env bash
# Stage balancing by profiled time (issue 5, "Stages"). --show-stages profiles the layers when no
# profile is cached and prints each stage's time, parameters and outgoing activation bytes and the
# cut's imbalance; schedule.balance = "flops" balances by FLOPs instead. A 2-rank waves run
# profiles once, caches profile.h5 in its run directory and logs where its cut came from; a second
# run reuses the cache, and a resumed run keeps its checkpoint's cut even without the cache.
source "$(dirname "$0")/lib/common.bash"
deck="$WT_SOURCE_DIR/inputs/text_transformer.toml"

"$WAVETRAIN" "$deck" --set schedule.kind=waves --show-stages --ranks 2 --run-dir "$dir/none" \
  > "$dir/stages.txt"
cat "$dir/stages.txt"
grep -q "stage cut balanced by profiled time (not cached, measured" "$dir/stages.txt" ||
  fail "show-stages did not profile"
[[ ! -e "$dir/none/profile.h5" ]] || fail "show-stages wrote a profile"
# The stage table: two stages covering all 37 layers, parameters summing to the model's 820,297,
# 64 x 128 floats leaving stage 0, positive times, and an imbalance of at least 1.
awk '$1 == "stage" && $2 == "nodes" { t = 1; next }
     t && $1 ~ /^[0-9]+$/ { n++; params += $6; if ($4 <= 0) bad = "time " $4
                            if ($1 == 0) out0 = $8; split($2, r, "-"); last = r[2] }
     END { if (n != 2) bad = bad " " n " stages"; if (params != 820297) bad = bad " params " params
           if (out0 != 32768) bad = bad " act " out0; if (last != 36) bad = bad " last node " last
           if (bad) { print bad; exit 1 } }' "$dir/stages.txt" || fail "stage table is wrong"
imb=$(sed -n 's/^imbalance (max\/mean stage time): //p' "$dir/stages.txt")
awk -v x="$imb" 'BEGIN { exit !(x >= 1 && x < 2) }' || fail "imbalance '$imb'"

"$WAVETRAIN" "$deck" --set schedule.kind=waves --set schedule.balance=flops --show-stages \
  --ranks 4 --run-dir "$dir/none" > "$dir/flops.txt"
grep -q "stage cut balanced by FLOPs" "$dir/flops.txt" || fail "balance=flops: no FLOP cut"
grep -q "^imbalance (max/mean stage FLOPs): " "$dir/flops.txt" || fail "balance=flops imbalance"
[[ $(awk '$1 == "stage" && $2 == "nodes" { t = 1; next } t && $1 ~ /^[0-9]+$/' "$dir/flops.txt" |
  wc -l) == 4 ]] || fail "4 ranks of waves: not 4 stages"

set +e
"$WAVETRAIN" "$deck" --set schedule.balance=time --show-stages 2> "$dir/bad.txt"
rc=$?
set -e
[[ $rc == 2 ]] || fail "bad schedule.balance: exit status $rc, expected 2"
grep -q "schedule.balance" "$dir/bad.txt" || fail "bad schedule.balance: key not named"

# Training: rank 0 profiles, caches and broadcasts; the log says where the cut came from.
data=$(fashion_mnist_h5)
run() {  # run-dir, extra options...
  local rd=$1
  shift
  mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$data\"" --set schedule.kind=waves --set train.eval_every_epoch=false \
    --run-dir "$rd" "$@"
}
cut_of() { sed -n 's/.*stages start at nodes \(\[.*\]\)$/\1/p' "$1"; }
run "$dir/run" --steps 3 > "$dir/first.txt"
cat "$dir/first.txt"
grep -q "stage cut balanced by profiled time (profile.h5, measured" "$dir/first.txt" ||
  fail "first run: no profiled cut logged"
[[ -f "$dir/run/profile.h5" ]] || fail "first run: no profile.h5"
"${WT_PYTHON:-/usr/bin/python3}" - "$dir/run/profile.h5" <<'PY' || fail "profile.h5 content"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert f.attrs["model"] == "mlp", f.attrs["model"]
n = len(f["nodes"])
assert n >= 5 and all(len(f[k]) == n for k in
    ("forward_fixed_s", "forward_per_sample_s", "backward_fixed_s", "backward_per_sample_s"))
assert (f["forward_per_sample_s"][:] + f["backward_per_sample_s"][:]).sum() > 0
PY
first_cut=$(cut_of "$dir/first.txt")
[[ -n "$first_cut" ]] || fail "first run: no cut logged"

# A new run into the same directory: --overwrite (the first run's metrics and checkpoints go,
# its profile.h5 stays and is reused).
run "$dir/run" --steps 3 --overwrite > "$dir/second.txt"
grep -q "stage cut balanced by profiled time (profile.h5, cached" "$dir/second.txt" ||
  fail "second run did not reuse profile.h5"
[[ $(cut_of "$dir/second.txt") == "$first_cut" ]] || fail "second run: another cut"

# Resuming keeps the checkpoint's cut, even with the profile gone.
rm "$dir/run/profile.h5"
run "$dir/run" --steps 5 --restart > "$dir/resumed.txt"
grep -q "stage cut taken from the checkpoint being resumed" "$dir/resumed.txt" ||
  fail "resumed run did not take the checkpoint's cut"
[[ $(cut_of "$dir/resumed.txt") == "$first_cut" ]] || fail "resumed run: another cut"
grep -q "resumed from" "$dir/resumed.txt" || fail "did not resume"
[[ ! -e "$dir/run/profile.h5" ]] || fail "resumed run profiled again"
echo "cut $first_cut kept across runs"
