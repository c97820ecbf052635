#pragma once
// Waterwave's rounds (§4.4) for co-located jobs: each job's steady step profiled once, node by
// node (exec/node_memory_recorder.hpp), cut into node groups, and the groups of all jobs paired on
// two streams (plan/colocate_plan.hpp: by bytes, or by Algorithm 1's index); a round then issues
// pair after pair, the two groups of a pair interleaved instruction by instruction (what a GPU
// host does), and synchronises memory at every pair boundary (CachingAllocator::sync_and_coalesce),
// so that a pair's allocating groups use what the pair before freed. The round's plan is made once
// per set of jobs: its combined program passes validate_program (plan/colocated_program.hpp), and
// the log says the split, the groups, the pairs and the round's predicted peak. The training loop
// (app/training_loop.hpp) runs each job's first two steps alone (warm-up, then the profile) and
// the rest in rounds.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plan/colocate_plan.hpp"
#include "plan/node_groups.hpp"

namespace wt {

class Job;

class PairedRounds {
 public:
  // round: the budget (0 = none), the partition and the pairing. split_bytes: the node-group
  // size; 0 = chosen by simulation (plan/split_choice.hpp). alloc_first: a pair's av group is
  // issued whole before the other, instead of interleaved.
  PairedRounds(const RoundOptions& round, int64_t split_bytes, bool alloc_first = false);
  bool profiled(const Job& job) const;
  // Runs `step` (the job's solo step, under the training loop's observers) with the job's
  // instructions observed, and keeps what it allocated node by node.
  void profile(Job& job, const std::function<void()>& step);
  // Issues one step of every job (begun, not finished), pair by pair.
  void issue(const std::vector<Job*>& jobs);
  // The groups of the job with id `job_id` in the last round planned (empty before one).
  std::vector<NodeGroup> groups(int job_id) const;
  // The last round's plan (its memory as predicted), and the jobs' profiles as measured.
  const RoundPlan& round_plan() const { return round_; }
  ProfiledJob profiled_job(int job_id) const { return profiles_.at(job_id).job; }

 private:
  struct Profile {
    ProfiledJob job;
    std::vector<Instruction> stream;  // the job's one stream, split node by node
  };
  RoundOptions options_;
  int64_t split_bytes_;
  bool alloc_first_;
  // The rounds' plan for the jobs of round_ids_, made once per set of jobs (not per step).
  void plan_rounds(const std::vector<Job*>& jobs, const std::vector<int>& ids);
  std::vector<int> round_ids_;
  RoundPlan round_;
  std::vector<std::vector<size_t>> round_ends_;  // per job of the round: group_ends
  std::map<int, Profile> profiles_;              // by job id
};

}  // namespace wt
