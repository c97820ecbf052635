#pragma once
// Waterwave's Algorithm 1 (§4.4), as cleaned in research/seeds-next.md §3.2: co-located jobs'
// node groups placed on two streams, av and dv; the groups at the same index of the two form a
// pair, and pairs run strictly one after another (with memory synchronised between them), so
// pair k's allocating groups use what pair k-1's deallocating groups freed.
//
// The printed algorithm can put a job's next group at or before its previous one (then two
// groups of one job would run in one pair, or out of order); here every placement is bumped past
// the job's last slot, leaving a hole (a bubble) where it must. `as_printed` turns the fix off,
// to show where the printed algorithm goes wrong.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct ColocatedJobGroups {
  int allocating = 0;      // its ANGs: net allocation >= 0, first
  int total = 0;           // ANGs then DNGs
  int64_t peak_bytes = 0;  // the job's solo peak, parameters and optimizer state included
  // Measured (empty: every group taken as split_bytes, as the paper does): the bytes the job holds
  // between steps (parameters, gradients, optimizer state), and each ANG's net allocation.
  int64_t resident_bytes = 0;
  std::vector<int64_t> allocating_bytes = {};
};

// One place on a stream: group `group` (0-based) of job `job`, or a hole (job -1).
struct PairSlot {
  int job = -1;
  int group = -1;
  bool hole() const { return job < 0; }
};

struct ColocatePairing {
  std::vector<PairSlot> av, dv;  // the same length: pair k is (av[k], dv[k])
  std::vector<int> job_order;    // jobs as Algorithm 1 sorted them (by group count, descending)
  int second_job_in_dv = 0;      // p: the second job's ANGs placed beside the first job's ANGs
  int pairs() const { return static_cast<int>(av.size()); }
};

// memory_limit and split_bytes decide p, the second job's ANGs that run beside the first's:
// the paper's floor((limit - first job's peak) / split) - 1, clamped to [0, the fewer ANGs of the
// two jobs]. With the second job's groups measured, p counts its own ANGs instead: those whose
// bytes fit, after its resident bytes, beside the first job's peak, less one (groups close at a
// node boundary, so they run over split_bytes: counted as split-sized, a front-heavy CNN's
// ANGs all went beside the first job's, which is lockstep). memory_limit 0: no budget, p as
// large as the clamp allows. split_bytes > 0. Jobs with no groups are not allowed
// (std::invalid_argument).
ColocatePairing pair_node_groups(const std::vector<ColocatedJobGroups>& jobs, int64_t memory_limit,
                                 int64_t split_bytes, bool as_printed = false);

// Algorithm 1's job order: by group count, descending ("to minimize the pipeline bubbles"), ties
// in the jobs' own order.
std::vector<int> jobs_by_group_count(const std::vector<int>& group_counts);

// "J1NG1 J1NG2 - J2NG1": a stream as the paper's Figure 5 writes it (jobs and groups 1-based).
std::string describe_stream(const std::vector<PairSlot>& stream);

// The first job whose groups are not in strictly increasing pair order, or -1.
int job_out_of_order(const ColocatePairing& pairing, int jobs);

}  // namespace wt
