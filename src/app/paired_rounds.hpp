#pragma once
// Waterwave's rounds (§4.4) for co-located jobs: each job's steady step profiled once, node by
// node (exec/node_memory_recorder.hpp), cut into node groups of split_bytes, and the groups of all
// jobs paired on two streams by Algorithm 1; a round then issues pair after pair, the two groups
// of a pair interleaved instruction by instruction (what a GPU host does), and synchronises memory
// at every pair boundary (CachingAllocator::sync_and_coalesce), so that a pair's allocating groups
// use what the pair before freed. The training loop (app/training_loop.hpp) runs each job's first
// two steps alone (warm-up, then the profile) and the rest in rounds.
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "plan/colocate_plan.hpp"
#include "plan/node_groups.hpp"

namespace wt {

class Job;

class PairedRounds {
 public:
  // memory_limit: the device's budget (Algorithm 1's p; 0 = none). split_bytes: the node-group
  // size; 0 = a quarter of the largest profiled job's forward allocation. alloc_first: a pair's
  // allocating group (stream av) is issued whole before the other, instead of interleaved.
  PairedRounds(int64_t memory_limit, int64_t split_bytes, bool alloc_first = false);
  bool profiled(const Job& job) const;
  // Runs `step` (the job's solo step, under the training loop's observers) with the job's
  // instructions observed, and plans the job's node groups from what it allocated.
  void profile(Job& job, const std::function<void()>& step);
  // Issues one step of every job (begun, not finished), pair by pair.
  void issue(const std::vector<Job*>& jobs);
  // A profiled job's groups at the split in force.
  ColocatedJob plan(const Job& job) const;
  ColocatedJob plan(int job_id) const;
  int64_t split_bytes() const;

 private:
  struct Profile {
    NodeMemoryProfile memory;
    int64_t peak_bytes = 0;
    int64_t resident_bytes = 0;
    std::vector<Instruction> stream;  // the job's one stream, split node by node
  };
  int64_t memory_limit_, split_bytes_;
  bool alloc_first_;
  // The rounds' plan for the jobs of round_ids_, made once per set of jobs (not per step).
  void plan_rounds(const std::vector<Job*>& jobs, const std::vector<int>& ids);
  std::vector<int> round_ids_;
  std::vector<ColocatedJob> round_plans_;
  ColocatePairing round_pairing_;
  std::map<int, Profile> profiles_;  // by job id
};

}  // namespace wt
