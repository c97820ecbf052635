#pragma once
// A co-located round as one Program (schedules are data, ARCHITECTURE.md): what the paired rounds
// (app/paired_rounds.hpp) issue, for validate_program, the simulator and --show-schedule. Job j's
// instructions (its one stream per rank, split node by node: sched/job_placement.hpp) run on
// device stream streams[j], group by group in pair order; at every pair boundary both streams
// record an event and wait for the other's (the boundary's synchronisation). Each job's slots,
// events and communicator groups are renumbered after the previous jobs' (groups[0] stays the
// world), and every instruction names its job.
#include <vector>

#include "plan/colocate_pairing.hpp"
#include "plan/node_groups.hpp"
#include "sched/instruction.hpp"

namespace wt {

// jobs: the jobs' programs, all of one world size, each rank one stream. groups: each job's node
// groups (group_ends must accept every rank's stream). Throws std::invalid_argument otherwise.
Program colocated_program(const std::vector<Program>& jobs,
                          const std::vector<std::vector<NodeGroup>>& groups,
                          const ColocatePairing& pairing, const std::vector<int>& streams);

}  // namespace wt
