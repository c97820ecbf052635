#!/usr/bin/env bash
# wavetrain --simulate: every schedule on 2 ranks of a device file, gang on 1024 ranks of a
# built-in device, the simulated step written as a trace the analysis scripts read, and bad
# devices refused with exit 2 and a message naming the file, line and key.
source "$(dirname "$0")/lib/common.bash"
deck="$WT_SOURCE_DIR/inputs/fashion_vgg.toml"
data=$(fashion_mnist_h5)
sim() { "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --simulate "$@"; }
cat > "$dir/dev.toml" <<'TOML'
base = "v100"
name = "v100-slower-latency"
intra_alpha_s = 2e-5
TOML
declare -A rate
for kind in gang pipeline pipeline4 waves ticktock; do
  extra=()
  [[ $kind == pipeline4 ]] && extra=(--set schedule.microbatches=4)
  sim --ranks 2 --device "$dir/dev.toml" --set "schedule.kind=\"${kind%4}\"" "${extra[@]}" \
    --set train.global_batch=1024 \
    > "$dir/$kind.txt" || fail "simulate $kind exited $?"
  grep -q "2 rank(s) of v100-slower-latency" "$dir/$kind.txt" || fail "$kind: device not named"
  rate[$kind]=$(awk '/throughput:/ {print $2}' "$dir/$kind.txt")
  for r in 0 1; do grep -Eq "^  $r +[0-9.]+% +[0-9.]+% +[0-9.]+ [KMG]iB" "$dir/$kind.txt" ||
    fail "$kind: no row for rank $r"; done
done
cat "$dir/waves.txt"
# Schedule shapes the simulator must reproduce: GPipe beats vanilla MP, waves beats both.
awk -v mp="${rate[pipeline]}" -v gp="${rate[pipeline4]}" -v wv="${rate[waves]}" \
  'BEGIN { exit !(gp > mp && wv > gp) }' || fail "waves ${rate[waves]}, GPipe ${rate[pipeline4]}, MP ${rate[pipeline]}"

# A thousand ranks: a summary instead of a row per rank.
sim --ranks 1024 --device a100 --set 'schedule.kind="gang"' --set train.global_batch=4096 \
  > "$dir/big.txt"
grep -q "1024 rank(s) of a100" "$dir/big.txt" && grep -q "^  max " "$dir/big.txt" ||
  fail "1024-rank summary missing: $(cat "$dir/big.txt")"

# The simulated step as a trace: the timeline and memory scripts draw it.
sim --ranks 2 --device v100 --set 'schedule.kind="waves"' --simulate-trace "$dir/sim.h5" > /dev/null
"$WT_PYTHON" "$WT_SOURCE_DIR/analysis/timeline.py" "$dir/sim.h5" -o "$dir/t.png" > /dev/null
"$WT_PYTHON" "$WT_SOURCE_DIR/analysis/memory.py" "$dir/sim.h5" -o "$dir/m.png" > "$dir/mem.txt"
[[ -s "$dir/t.png" && -s "$dir/m.png" ]] || fail "the simulated trace was not drawn"
# The memory over time peaks where the simulation's report says.
peak=$(awk '$1 == "0" {print $2; exit}' "$dir/mem.txt")
[[ -n "$peak" ]] && awk -v p="$peak" 'BEGIN { exit !(p > 0) }' || fail "no memory: $(cat "$dir/mem.txt")"

# This machine as a device file (tools/probe_device) and measured layer times from the profiling
# step of a real 2-rank run: the simulation then uses both.
mpiexec -n 2 "$WT_BINARY_DIR/probe_device" > "$dir/host.toml"
mpiexec -n 2 "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --set 'schedule.kind="waves"' \
  --set train.eval_every_epoch=false --steps 1 --quiet --run-dir "$dir/run" > /dev/null
[[ -f "$dir/run/profile.h5" ]] || fail "the 2-rank waves run wrote no profile.h5"
sim --ranks 2 --device "$dir/host.toml" --profile "$dir/run/profile.h5" \
  --set 'schedule.kind="pipeline"' > "$dir/measured.txt"
grep -q "layer times: measured profile $dir/run/profile.h5" "$dir/measured.txt" &&
  grep -q "rank(s) of this_machine" "$dir/measured.txt" || fail "$(cat "$dir/measured.txt")"

# Bad input: exit 2, one message naming what is wrong.
expect_error() {  # pattern, command...
  local pattern=$1; shift
  set +e; "$@" > "$dir/out" 2> "$dir/err"; local rc=$?; set -e
  [[ $rc == 2 ]] || fail "exit $rc (want 2) for: $* ($(cat "$dir/err"))"
  grep -q -- "$pattern" "$dir/err" || fail "message '$(cat "$dir/err")' lacks '$pattern'"
}
expect_error "command line: --device: 'tpu'" sim --ranks 2 --device tpu
printf 'base = "v100"\n\npeak_flop = 1e12\n' > "$dir/bad.toml"
expect_error "bad.toml:3: peak_flop: unknown key" sim --ranks 2 --device "$dir/bad.toml"
printf 'efficiency = "high"\n' > "$dir/bad.toml"
expect_error "bad.toml:1: efficiency: must be a non-negative number" sim --ranks 2 --device "$dir/bad.toml"
expect_error "profile.h5: --profile: " "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
  --set "data.path=\"$data\"" --simulate --ranks 2 --device v100 --profile "$dir/run/profile.h5"
expect_error "command line: --device: --simulate needs" sim --ranks 2
expect_error "only applies with --simulate" "$WAVETRAIN" "$deck" --device v100

# DeepPool's burst plan: VGG-16 at global batch 32 on 8 A100s keeps its convolutions on 8 ranks
# and moves the fully connected layers to fewer (its Fig. 9a). Priced as the executor runs sync
# (overlapped with backward) data parallelism is a little faster but spends more device time,
# which the amplification limit forbids; priced as DeepPool does (no overlap), burst also beats it.
vgg=("$WAVETRAIN" "$WT_SOURCE_DIR/inputs/vgg16_sim.toml" --set "data.path=\"$data\"")
for model in executor deeppool; do
  "${vgg[@]}" --show-plan --ranks 8 --device a100 --set "burst.cost_model=$model" > "$dir/plan.txt"
  cat "$dir/plan.txt"
  grep -q "^conv1_1..relu1_1 *8 " "$dir/plan.txt" || fail "$model plan: conv1_1 not on 8 ranks"
  grep -Eq "^fc6..drop6 +[124] " "$dir/plan.txt" || fail "$model plan: fc6 still on 8 ranks"
  awk '/^predicted step/ { burst = $5 + 0 } /^data parallel/ { dp = $8 + 0 }
       END { exit !(burst < dp) }' "$dir/plan.txt" || fail "$model plan: not fewer GPU-ms than DP"
done
ratio=$(awk '/^data parallel/ { print $NF }' "$dir/plan.txt")
awk -v r="$ratio" 'BEGIN { exit !(r < 1) }' || fail "deeppool plan: burst/DP step $ratio, expected < 1"
expect_error "command line: --device: --show-plan needs" "${vgg[@]}" --show-plan --ranks 8
expect_error "burst.amp_limit" "${vgg[@]}" --show-plan --ranks 8 --device a100 \
  --set burst.amp_limit=0
expect_error "train.global_batch" "${vgg[@]}" --show-plan --ranks 8 --device a100 \
  --set train.global_batch=7
# A forced plan (burst.ranks, one count per node): nodes 0-29 (the convolutions) on 8, pool5 and
# the classifier on 1.
forced="[$(printf '8,%.0s' $(seq 30))1,1,1,1,1,1,1,1,1,1]"
"${vgg[@]}" --show-plan --ranks 8 --device a100 --set "burst.ranks=$forced" > "$dir/forced.txt"
grep -q "forced by burst.ranks" "$dir/forced.txt" || fail "forced plan not reported"
grep -q "^segments: \[0..29\] on 8 \[30..39\] on 1" "$dir/forced.txt" ||
  fail "forced plan: $(grep segments "$dir/forced.txt")"
expect_error "burst.ranks: has 1 entries" "${vgg[@]}" --show-plan --ranks 8 --device a100 \
  --set "burst.ranks=[8]"
# DeepPool multiplexing priced at scale: VGG-16 burst with a background VGG-16 on 8 A100s.
for d in vgg16_burst_background_sim vgg16_background_sim; do
  sed "s|\.\./data/fashion_mnist\.h5|$data|; s|\.\./models/|$WT_SOURCE_DIR/models/|" \
    "$WT_SOURCE_DIR/inputs/$d.toml" >"$dir/$d.toml"
done
"$WAVETRAIN" "$dir/vgg16_burst_background_sim.toml" --simulate --ranks 8 --device a100 >"$dir/bg.txt"
cat "$dir/bg.txt"
grep -q "^    multiplexed: foreground .* samples/s (slowdown [0-9.]*), background [0-9.]* samples/s" \
  "$dir/bg.txt" || fail "no multiplexed line"
grep -q "^    static partition: foreground on 7 ranks" "$dir/bg.txt" || fail "no static partition line"
echo "simulate: ok"
