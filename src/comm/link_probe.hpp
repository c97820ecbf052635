#pragma once
// The link between ranks 0 and 1 as a cost model needs it (alpha + bytes / beta), measured by a
// short ping-pong through the run's own communicator: what the burst planner prices transfers and
// allreduces with when it plans for the machine it runs on.
#include "comm/communicator.hpp"

namespace wt {

struct LinkCost {
  double alpha_s = 0;      // one message's fixed cost
  double bytes_per_s = 0;  // 0 on one rank: no link
};

// Collective over the world; ranks other than 0 and 1 only take the result. About 20 round trips
// (milliseconds on shared memory).
LinkCost measure_link(Communicator& comm);

}  // namespace wt
