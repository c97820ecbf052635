#include "comm/link_probe.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace wt {

namespace {

// The fastest of `reps` round trips of `count` floats between ranks 0 and 1, seconds one way.
double one_way_s(Communicator& comm, int64_t count, int reps) {
  std::vector<float> buffer(size_t(count), 0.0f);
  const int me = comm.rank(), peer = 1 - me;
  double best = 1e30;
  for (int k = 0; k < reps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    if (me == 0) {
      comm.isend(buffer.data(), count, peer, 0)->wait();
      comm.irecv(buffer.data(), count, peer, 0)->wait();
    } else {
      comm.irecv(buffer.data(), count, peer, 0)->wait();
      comm.isend(buffer.data(), count, peer, 0)->wait();
    }
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best / 2;
}

}  // namespace

LinkCost measure_link(Communicator& comm) {
  LinkCost link;
  if (comm.size() < 2) return link;
  double measured[2] = {0, 0};
  if (comm.rank() < 2) {
    constexpr int64_t kLarge = 1 << 18;  // 1 MiB of floats
    const double small = one_way_s(comm, 1, 10), large = one_way_s(comm, kLarge, 10);
    measured[0] = small;
    measured[1] = double(kLarge * sizeof(float)) / std::max(1e-9, large - small);
  }
  comm.broadcast_bytes(measured, sizeof measured, 0);
  link.alpha_s = measured[0];
  link.bytes_per_s = measured[1];
  return link;
}

}  // namespace wt
