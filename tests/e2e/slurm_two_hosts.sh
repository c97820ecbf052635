#!/usr/bin/env bash
# End to end on a real two-host Slurm cluster built on this machine (tests/e2e/lib/two_hosts.bash):
# two network namespaces joined by a veth pair (10.77.0.1 and .2, nothing routed out), hostnames
# wt-host1 and wt-host2, a slurmd on each, slurmctld on wt-host1. The shipped job scripts run
# unchanged, only resources given on the sbatch command line; MPI between the hosts is TCP over
# the link (Open MPI is told btl tcp,self and the link's subnet, as a site's environment would).
#   1. multi_node.sbatch, 2 nodes x 1 rank, gang: completes; one rank ran on each host; the
#      gradients crossed the link (its byte counters grew by at least a gradient per step).
#   2. the same run on one node with 2 ranks: the same losses within float summation tolerance.
#   3. two_wave.sbatch, 2 nodes x 1 rank (waves, tick-tock): completes on both hosts.
#   4. the rank on wt-host2 is killed mid-run: rank 0 on wt-host1 stops within the stall bound
#      naming rank 1 and its host, the script requeues the job (status 5), and the requeued job
#      resumes from the last checkpoint and finishes.
# Exits 77 (ctest: skipped) where network namespaces or Slurm cannot be started, saying why.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slurm_cluster.bash"
source "$(dirname "$0")/lib/two_hosts.bash"
source "$(dirname "$0")/lib/chain.bash"
source "$(dirname "$0")/lib/processes.bash"
slurm_require
two_hosts_require
trap 'two_hosts_stop; remove_scratch "$dir"' EXIT

data=$(fashion_mnist_h5)
deck=$WT_SOURCE_DIR/inputs/fashion_mlp.toml
jobs=$WT_SOURCE_DIR/jobscripts/slurm
two_hosts_start "$dir/net" || fail "could not build the two hosts' network"
two_hosts_slurm_start "$dir/slurm" || fail "the two-host Slurm cluster did not come up"
# What a site's environment would set for Open MPI on this network: TCP between processes (no
# shared memory; each rank is alone on its host anyway), on the link's subnet only.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=$TWO_HOSTS_SUBNET \
  OMPI_MCA_oob_tcp_if_include=$TWO_HOSTS_SUBNET
export WAVETRAIN
two_nodes=(--nodes=2 --ntasks-per-node=1 --cpus-per-task=1 --time=30)
one_node=(--nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=30)
common=(--set "data.path=\"$data\"" --set train.log_every_steps=10)
mkdir -p "$dir/work"
cd "$dir/work"

show() { echo "--- job output ($1):"; cat "$1" || true; echo "---"; }
# Submits, waits, and checks the job completed with exit 0; prints the job id.
run_job() {  # out sbatch arguments (options, script, its arguments)
  local out=$1 id state
  shift
  id=$(sbatch --parsable --output="$out" "$@") || fail "sbatch $*"
  state=$(slurm_wait_job "$id" 120) || { show "$out" >&2; fail "job $id: $state"; }
  [[ $state == COMPLETED ]] || { show "$out" >&2; fail "job $id ended $state, expected COMPLETED"; }
  echo "$id"
}
losses() { awk -F, '$1 == "train" { print $2, $4 }' "$1/metrics.csv"; }

# 1. Gang on two hosts.
before=$(two_hosts_link_bytes)
run_job gang2.out "${two_nodes[@]}" "$jobs/multi_node.sbatch" "$deck" "${common[@]}" \
  --steps 60 --run-dir gang2 >/dev/null
received=$(($(two_hosts_link_bytes) - before))
show gang2.out
grep -q "on wt-host\[1-2\]: 2 ranks" gang2.out || fail "the job did not run on wt-host1 and wt-host2"
grep -q "wavetrain exited with status 0" gang2.out || fail "wavetrain did not exit 0"
[[ $(last_metric gang2/metrics.csv train step) == 60 ]] || fail "gang2 does not end at step 60"
params=$(sed -n 's/.*(\([0-9]*\) parameters).*/\1/p' gang2.out | head -n 1)
echo "wt-host2 received $received bytes over the link: $((received / 60)) per step, gradient $((params * 4))"
# Each step's allreduce brings a rank at least a gradient's worth (the other rank's half to
# reduce, then the reduced half it does not own); a run over shared memory would bring almost
# nothing. (9/10 of that: the bound is about the path, not the exact algorithm.)
((received >= 60 * params * 4 * 9 / 10)) || fail "the gradients did not cross the link ($received bytes)"

# 2. The same run on one node, 2 ranks: the same losses.
run_job one2.out "${one_node[@]}" "$jobs/multi_node.sbatch" "$deck" "${common[@]}" \
  --steps 60 --run-dir one2 >/dev/null
grep -q "on wt-host1: 2 ranks" one2.out || { show one2.out; fail "the one-node run was not on one host"; }
paste -d' ' <(losses gang2) <(losses one2) | awk '
  { n++; d = $2 - $4; if (d < 0) d = -d; r = d / ($4 < 0 ? -$4 : $4); if (r > worst) worst = r
    if ($1 != $3) bad = 1 }
  END { printf "losses, two hosts against one node: %d rows, worst relative difference %.2e\n", n, worst
        exit (bad || n != 6 || worst > 1e-5) }' || fail "the two-host losses differ from one node's"

# 3. Waves (tick-tock) on two hosts.
run_job waves2.out "${two_nodes[@]}" "$jobs/two_wave.sbatch" "$deck" "${common[@]}" \
  --steps 40 --run-dir waves2 >/dev/null
show waves2.out
grep -q "schedule ticktock on 2 ranks" waves2.out || fail "two_wave.sbatch did not run tick-tock on 2 ranks"
grep -q "on wt-host\[1-2\]: 2 ranks" waves2.out || fail "the waves job did not run on both hosts"
[[ $(last_metric waves2/metrics.csv train step) == 40 ]] || fail "waves2 does not end at step 40"

# 4. Kill the rank on wt-host2 mid-run. The chain wrapper gives the first run no reachable end
# and the requeued one 60 steps past the checkpoint it resumes from.
rank_on() {  # run_dir rank: "pid host" of that rank's process
  local p
  for p in $(pgrep -x wavetrain || true); do
    tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qx -- "$1" || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_PROCID=$2" || continue
    echo "$p $(nsenter -t "$p" -u hostname)"
    return
  done
}
WAVETRAIN=$(chain_wavetrain 60)
stall=3
id=$(sbatch --parsable --output=fault.out "${two_nodes[@]}" "$jobs/multi_node.sbatch" "$deck" \
  "${common[@]}" --set checkpoint.every_steps=20 --set failure.stall_seconds=$stall \
  --run-dir fault)
echo "submitted multi_node.sbatch as job $id"
(wait_for_line fault/metrics.csv '^train,([4-9]|[1-9][0-9]+)0,' 120) || { show fault.out; fail "no training"; }
# The ranks' processes, polled: srun may still be starting the second host's while the first's
# already writes metrics (a lookup that found nothing ended the test without a word under set -e).
victim="" survivor=""
for ((try = 0; try < 100; try++)); do
  read -r victim victim_host < <(rank_on fault 1) || true
  read -r survivor survivor_host < <(rank_on fault 0) || true
  [[ -n $victim && -n $survivor ]] && break
  sleep 0.1
done
[[ -n $victim && -n $survivor ]] || { show fault.out; fail "rank 0 or 1 of job $id not found in 10 s"; }
[[ $victim_host == wt-host2 && $survivor_host == wt-host1 ]] ||
  fail "ranks not found where expected: rank 1 '$victim' on '$victim_host', rank 0 '$survivor' on '$survivor_host'"
kill -KILL "$victim"
t0=$(date +%s.%N)
wait_gone "$survivor" 30 || fail "rank 0 still runs 30 s after rank 1 was killed"
seconds=$(echo "$(date +%s.%N) - $t0" | bc)
latest=$(cat fault/checkpoints/latest)
echo "rank 0 ended $seconds s after rank 1 was killed; last checkpoint $latest"
# The bound: the stall time, the watchdog's tick and a little scheduling slack.
state=$(slurm_wait_job "$id" 120) || { show fault.out; fail "job $id: $state"; }
show fault.out
(($(echo "$seconds < $stall + 3" | bc))) || fail "rank 0 took $seconds s, past the stall bound"
[[ $state == COMPLETED ]] || fail "job $id ended $state, expected COMPLETED after the requeue"
grep -Eq "wavetrain: rank 0: stalled: .*rank 1 on wt-host2: not on this node" fault.out ||
  fail "rank 0 did not name rank 1 and its host"
grep -q "wavetrain exited with status 5" fault.out || fail "the first job did not end with status 5"
grep -q "requeueing job $id to resume from the last checkpoint" fault.out || fail "no requeue"
[[ $(slurm_job_field "$id" Restarts) == 1 ]] || fail "job $id requeued $(slurm_job_field "$id" Restarts) times"
ck=$((10#$(sed 's/step_\([0-9]*\)\.h5/\1/' <<<"$latest")))
grep -q "wavetrain: resumed from .* at step $ck$" fault.out || fail "the requeued job did not resume at step $ck"
steps=$(chain_final_steps fault)
[[ $steps == $((ck + 60)) && $(last_metric fault/metrics.csv train step) == "$steps" ]] ||
  fail "the resumed run does not end at step $((ck + 60))"
if ls -A | grep -q '^.wavetrain-status'; then fail "a status file was left in the submit directory"; fi
