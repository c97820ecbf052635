#!/usr/bin/env bash
# End to end: jobscripts/pbs/multi_node.pbs on two hosts built on this machine (tests/e2e/lib/
# two_hosts.bash: network namespaces wt-host1 and wt-host2 joined by a veth pair, 10.77.0.0/24,
# nothing routed out), through the PBS emulator (lib/pbs_emulator.bash) with a two-line node file
# naming the two hosts. The batch shell runs on wt-host1; mpirun starts the rank on wt-host2 with
# an ssh stand-in (plm_rsh_agent), and MPI between the hosts is TCP over the link.
#   1. select=2:ncpus=1:mpiprocs=1, a short gang run: exit 0, ranks on both hosts, the gradients
#      crossed the link.
#   2. tools/probe_device across the two hosts measures the link (latency, bandwidth) as the
#      simulator's inter-node link; `wavetrain --simulate --ranks 2` with that device file
#      predicts the step the run of 1. measured. Both are printed (bench/README.md records them
#      and why they differ); nothing is asserted about their ratio, which depends on the
#      machine's load and its network stack.
# Exits 77 (ctest: skipped) where network namespaces cannot be made, saying why.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/pbs_emulator.bash"
source "$(dirname "$0")/lib/two_hosts.bash"
two_hosts_require
trap 'two_hosts_stop; remove_scratch "$dir"' EXIT
data=$(fashion_mnist_h5)
two_hosts_start "$dir/net" || fail "could not build the two hosts' network"

# What a site's login profile would export: Open MPI's settings for this network (TCP on the
# link's subnet, the remote shell), and for root in this container.
site=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
  OMPI_MCA_btl=tcp,self "OMPI_MCA_btl_tcp_if_include=$TWO_HOSTS_SUBNET"
  "OMPI_MCA_oob_tcp_if_include=$TWO_HOSTS_SUBNET" "OMPI_MCA_plm_rsh_agent=$TWO_HOSTS_DIR/bin/rsh_agent")
pbs_emulator_init "$dir/pbs" "${site[@]}"
PBS_EMU_HOSTS="${TWO_HOSTS[*]}"
PBS_EMU_LAUNCH=("$TWO_HOSTS_DIR/bin/on_host" 1)
mkdir -p "$dir/work"
cd "$dir/work"
ln -s "$WT_SOURCE_DIR/jobscripts" "$WT_SOURCE_DIR/inputs" "$WT_SOURCE_DIR/models" .
deck=inputs/fashion_mlp.toml
show() { echo "--- job output ($1):"; cat "$1" || true; echo "---"; }

# 1. Two chunks of one rank, one on each host.
steps=100
before=$(two_hosts_link_bytes)
status=0
pbs_run -l "select=2:ncpus=1:mpiprocs=1,walltime=00:01:00" -v "DECK=$deck,WAVETRAIN=$WAVETRAIN,\
WT_ARGS=--set data.path=\"$data\" --set train.log_every_steps=10 --steps $steps --run-dir run1" \
  jobscripts/pbs/multi_node.pbs || status=$?
received=$(($(two_hosts_link_bytes) - before))
show "$PBS_EMU_OUTPUT"
[[ $status == 0 ]] || fail "multi_node.pbs exited with status $status"
[[ $(cat "$PBS_EMU_DIR/jobs/${PBS_EMU_JOBID%%.*}.nodes") == "wt-host1"$'\n'"wt-host2" ]] || fail "the node file does not name wt-host1 and wt-host2"
grep -q "on wt-host1,wt-host2: 2 ranks" "$PBS_EMU_OUTPUT" || fail "the job did not see both hosts"
grep -q "wavetrain exited with status 0" "$PBS_EMU_OUTPUT" || fail "wavetrain did not exit 0"
[[ $(last_metric run1/metrics.csv train step) == "$steps" ]] || fail "metrics.csv does not end at step $steps"
params=$(sed -n 's/.*(\([0-9]*\) parameters).*/\1/p' "$PBS_EMU_OUTPUT" | head -n 1)
echo "wt-host2 received $received bytes over the link, $((received / steps)) per step; gradient $((params * 4))"
((received >= steps * params * 4 * 9 / 10)) || fail "the gradients did not cross the link ($received bytes)"

# 2. The link as the simulator sees it, and its prediction for the run of 1.
on_host 1 env "${site[@]}" mpirun -n 2 --host wt-host1,wt-host2 \
  "$WT_BINARY_DIR/probe_device" --name two_hosts_tcp >"$dir/two_hosts.toml" ||
  fail "probe_device across the hosts failed"
cat "$dir/two_hosts.toml"
grep -q "^ranks_per_node = 1$" "$dir/two_hosts.toml" || fail "probe_device did not see two nodes"
grep -q "^inter_alpha_s = .*on two nodes" "$dir/two_hosts.toml" || fail "the link is not the inter-node one"
"$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --simulate --ranks 2 \
  --device "$dir/two_hosts.toml" >"$dir/sim.txt" || fail "--simulate with the measured device failed"
cat "$dir/sim.txt"
predicted=$(awk '/^  step:/ { v = $2; u = $3 } END { print v * (u == "ms" ? 1e-3 : u == "us" ? 1e-6 : 1) }' "$dir/sim.txt")
# Measured: the median of the logged rates after the first window (which holds the warm-up).
rate=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $1 == "train" && $c["step"] > 10 { print $c["samples_per_s"] }' run1/metrics.csv | sort -g |
  awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
batch=$(sed -n 's/.*global batch \([0-9]*\).*/\1/p' "$PBS_EMU_OUTPUT" | head -n 1)
measured=$(echo "$batch / $rate" | bc -l)
printf 'ROW | two hosts over TCP, mlp gang, batch %s | predicted step %.4f s | measured step %.4f s | measured/predicted %.1f\n' \
  "$batch" "$predicted" "$measured" "$(echo "$measured / $predicted" | bc -l)"
awk -v p="$predicted" -v m="$measured" 'BEGIN { exit !(p > 0 && m > 0) }' || fail "no step time to compare"
