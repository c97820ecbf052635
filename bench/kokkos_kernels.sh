#!/usr/bin/env bash
# Builds bench/kokkos_kernels.cpp with the project's release flags against the Kokkos the build
# uses (Debian's: /usr/include/trilinos) and runs it: each Kokkos host kernel against the loop it
# replaced. Usage: bench/kokkos_kernels.sh [n] [repetitions]   (binary goes to build/bench/)
set -euo pipefail
source "$(dirname "$0")/host_bench_env.bash"  # here, src, out, kokkos_flags, kokkos_libs
# Batch norm's, layer norm's, the rows' and softmax cross-entropy's baselines are the files as
# they were just before their loops became kernels, taken from git history (not copies in the
# tree), in their own namespace (layer norm's file of f270f27^ holds both of its loops).
# WT_KERNEL_BASELINE=<commit> takes all four from that commit instead (e.g. 72122e4: the kernels
# just before they became the portable functors of src/ops/portable/).
for baseline in batchnorm:3cca06d^ layer_norm:f270f27^ rows:0d358a8 softmax_xent:0d358a8; do
  file=${baseline%%:*}
  git -C "$here/.." show "${WT_KERNEL_BASELINE:-${baseline#*:}}:src/ops/host/$file.cpp" |
    sed 's/^namespace wt::ops {/namespace wt::ops_loop {\nusing namespace wt::ops;  \/\/ the header'"'"'s types/; s|^}  // namespace wt::ops$|}  // namespace wt::ops_loop|' \
    >"$out/${file}_loops.cpp"
done
# The attention kernels were a loop inline in the layer before: their baseline is the kernel
# file as it was at 72122e4 (lambdas) with each host_for turned back into that plain loop.
git -C "$here/.." show 72122e4:src/ops/host/attention.cpp | sed 's/^namespace wt::ops {/namespace wt::ops_loop {/; s|^}  // namespace wt::ops$|}  // namespace wt::ops_loop|;
     s/host_for("[^"]*", T, \[=\](int64_t i) {/for (int64_t i = 0; i < T; ++i) {/; s/^  });$/  }/' \
  >"$out/attention_loops.cpp"
g++ -std=c++17 -O3 -march=native -DNDEBUG -I"$src" "${kokkos_flags[@]}" \
  "$here/kokkos_kernels.cpp" "$src/ops/host/elementwise.cpp" \
  "$src/ops/host/rows.cpp" "$src/ops/host/attention.cpp" \
  "$src/ops/host/layer_norm.cpp" "$src/ops/host/optimizer_updates.cpp" \
  "$src/ops/host/batchnorm.cpp" "$out/batchnorm_loops.cpp" "$out/layer_norm_loops.cpp" \
  "$src/ops/host/softmax_xent.cpp" "$out/rows_loops.cpp" "$out/softmax_xent_loops.cpp" \
  "$out/attention_loops.cpp" \
  -fno-math-errno "${kokkos_libs[@]}" -o "$out/kokkos_kernels"
"$out/kokkos_kernels" "${1:-1048576}" "${2:-200}"
