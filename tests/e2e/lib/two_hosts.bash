# Two hosts on one machine for the multi-node tests (sourced after common.bash, and after
# slurm_cluster.bash for two_hosts_slurm_start; not run):
#
#   two_hosts_require          exits 77 with the reason where network namespaces cannot be made
#   two_hosts_start DIR        two network namespaces joined by a veth pair, 10.77.0.1 and
#                              10.77.0.2 (/24, no route out), hostnames wt-host1 and wt-host2
#                              resolved by a private hosts file; everything else under DIR
#   on_host N CMD...           runs CMD on host N: in its network namespace, under its hostname,
#                              with the private hosts file as /etc/hosts (a mount private to CMD);
#                              also an executable, $TWO_HOSTS_DIR/bin/on_host, for other processes
#   $TWO_HOSTS_DIR/bin/rsh_agent  an ssh stand-in for Open MPI (plm_rsh_agent): `agent HOST CMD`
#   two_hosts_link_bytes       bytes wt-host2 has received over the link so far
#   two_hosts_slurm_start DIR  munged, slurmctld on wt-host1 and a slurmd on each host; puts
#                              client wrappers (sbatch, scontrol, ...) that talk to it first on PATH
#   two_hosts_stop             stops the daemons by pid, deletes the namespaces (and so the link)
#
# The addresses exist only inside the namespaces: nothing is routed to or from the machine's own
# network, and each host is a separate network stack, so MPI between them must use TCP over the
# link (Open MPI's shared-memory transport only joins processes it sees on the same host).
# Needs root, iproute2 (ip netns) and util-linux (unshare, nsenter).

TWO_HOSTS=(wt-host1 wt-host2)
TWO_HOSTS_ADDRS=(10.77.0.1 10.77.0.2)
TWO_HOSTS_SUBNET=10.77.0.0/24
_two_hosts_ns=()
_two_hosts_veth=(wt$$a wt$$b)

two_hosts_require() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "skipped: needs root to create network namespaces"
    exit 77
  fi
  local cmd
  for cmd in ip unshare nsenter; do
    command -v "$cmd" >/dev/null 2>&1 ||
      { echo "skipped: $cmd not found (iproute2, util-linux)"; exit 77; }
  done
  local probe=wt$$probe why
  if ! why=$(ip netns add "$probe" 2>&1); then
    echo "skipped: cannot create a network namespace here: $why"
    exit 77
  fi
  ip netns delete "$probe"
}

two_hosts_start() {  # dir
  TWO_HOSTS_DIR=$1
  mkdir -p "$TWO_HOSTS_DIR"
  {
    echo "127.0.0.1 localhost"
    echo "${TWO_HOSTS_ADDRS[0]} ${TWO_HOSTS[0]}"
    echo "${TWO_HOSTS_ADDRS[1]} ${TWO_HOSTS[1]}"
  } >"$TWO_HOSTS_DIR/hosts"
  local i
  for i in 0 1; do
    ip netns add "wt$$h$((i + 1))" || return 1
    _two_hosts_ns+=("wt$$h$((i + 1))")
  done
  ip link add "${_two_hosts_veth[0]}" type veth peer name "${_two_hosts_veth[1]}" || return 1
  for i in 0 1; do
    ip link set "${_two_hosts_veth[i]}" netns "${_two_hosts_ns[i]}" || return 1
    ip -n "${_two_hosts_ns[i]}" addr add "${TWO_HOSTS_ADDRS[i]}/24" dev "${_two_hosts_veth[i]}"
    ip -n "${_two_hosts_ns[i]}" link set "${_two_hosts_veth[i]}" up
    ip -n "${_two_hosts_ns[i]}" link set lo up
  done
  _two_hosts_commands
}

on_host() {  # n cmd...
  "$TWO_HOSTS_DIR/bin/on_host" "$@"
}

# The executables behind on_host and the rsh agent.
_two_hosts_commands() {
  mkdir -p "$TWO_HOSTS_DIR/bin"
  cat >"$TWO_HOSTS_DIR/bin/on_host" <<EOF
#!/bin/bash
# on_host N CMD...: CMD on host N (written by tests/e2e/lib/two_hosts.bash).
namespaces=(${_two_hosts_ns[*]}) hosts=(${TWO_HOSTS[*]}) hosts_file='$TWO_HOSTS_DIR/hosts'
EOF
  cat >>"$TWO_HOSTS_DIR/bin/on_host" <<'EOF'
n=$(($1 - 1))
shift
# nsenter, not `ip netns exec`, which mounts a fresh /sys without the cgroup tree slurmd needs;
# unshare --mount makes the bind mount of the hosts file CMD's and its children's only. Every
# step execs: CMD keeps this process's pid.
exec nsenter --net="/run/netns/${namespaces[n]}" unshare --mount --uts bash -c \
  'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' on_host \
  "${hosts[n]}" "$hosts_file" "$@"
EOF
  # Open MPI starts its daemon on another host with `AGENT [options] HOST COMMAND...`, as with
  # ssh: this runs COMMAND (a shell command line, as ssh would pass it) on that host.
  cat >"$TWO_HOSTS_DIR/bin/rsh_agent" <<EOF
#!/bin/bash
hosts=(${TWO_HOSTS[*]}) on_host='$TWO_HOSTS_DIR/bin/on_host'
EOF
  cat >>"$TWO_HOSTS_DIR/bin/rsh_agent" <<'EOF'
while [[ $1 == -* ]]; do shift; done  # ssh options (-x), none of which apply
host=$1
shift
for i in "${!hosts[@]}"; do
  [[ $host == "${hosts[i]}" ]] && exec "$on_host" $((i + 1)) bash -c "$*"
done
echo "rsh_agent: unknown host $host" >&2
exit 255
EOF
  chmod +x "$TWO_HOSTS_DIR/bin/on_host" "$TWO_HOSTS_DIR/bin/rsh_agent"
}

two_hosts_link_bytes() {
  ip -n "${_two_hosts_ns[1]}" -s -j link show "${_two_hosts_veth[1]}" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'
}

# Client commands run on wt-host1, where slurmctld listens (the test itself stays outside).
_two_hosts_client_wrappers() {  # bin_dir
  local cmd
  mkdir -p "$1"
  for cmd in sbatch scontrol sinfo squeue scancel srun; do
    cat >"$1/$cmd" <<WRAP
#!/bin/bash
exec nsenter --net=/run/netns/${_two_hosts_ns[0]} $(command -v "$cmd") "\$@"
WRAP
    chmod +x "$1/$cmd"
  done
  export PATH="$1:$PATH"
}

two_hosts_slurm_start() {  # dir
  local root=$1 lines="" i node
  SLURM_ROOT=$root
  slurm_munge_start "$root" || return 1
  for i in 0 1; do
    mkdir -p "$root/spool/${TWO_HOSTS[i]}" "$root/tmp/${TWO_HOSTS[i]}"
    node=$(slurmd -C | head -n 1 |
      sed "s/^NodeName=[^ ]*/NodeName=${TWO_HOSTS[i]} NodeAddr=${TWO_HOSTS_ADDRS[i]}/")
    lines+="$node Gres=gpu:2 State=UNKNOWN"$'\n'
  done
  # Fresh network stacks: Slurm's default ports are free in them.
  slurm_write_conf "$root" "${TWO_HOSTS[0]}" "${TWO_HOSTS_ADDRS[0]}" 6817 6818 \
    "${TWO_HOSTS[0]},${TWO_HOSTS[1]}" "$lines"
  on_host 1 slurmctld -D -i -f "$SLURM_CONF" >"$root/log/slurmctld.out" 2>&1 &
  _slurm_pids+=($!)
  for i in 1 2; do
    on_host "$i" slurmd -D -N "${TWO_HOSTS[i - 1]}" -f "$SLURM_CONF" \
      >"$root/log/slurmd.${TWO_HOSTS[i - 1]}.out" 2>&1 &
    _slurm_pids+=($!)
  done
  _two_hosts_client_wrappers "$root/bin"
  slurm_wait_idle "$root" 2
}

two_hosts_stop() {
  if declare -F slurm_cluster_stop >/dev/null; then slurm_cluster_stop; fi
  local ns
  # Deleting a namespace deletes the veth end in it, and with it the pair.
  for ns in "${_two_hosts_ns[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
  _two_hosts_ns=()
  # A pair that never made it into its namespace (a failed start) is still here.
  ip link delete "${_two_hosts_veth[0]}" 2>/dev/null || true
}
