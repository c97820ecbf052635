#include "app/paired_rounds.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "app/issue_in_turn.hpp"
#include "exec/node_memory_recorder.hpp"
#include "job/job.hpp"

namespace wt {

PairedRounds::PairedRounds(int64_t memory_limit, int64_t split_bytes, bool alloc_first)
    : memory_limit_(memory_limit), split_bytes_(split_bytes), alloc_first_(alloc_first) {
  if (split_bytes < 0) throw std::invalid_argument("co-location needs split_bytes >= 0");
}

bool PairedRounds::profiled(const Job& job) const { return profiles_.count(job.id()) > 0; }

int64_t PairedRounds::split_bytes() const {
  if (split_bytes_ > 0) return split_bytes_;
  int64_t largest = 0;
  for (const auto& [id, p] : profiles_) {
    int64_t forward = 0;
    for (const NodePhaseMemory& node : p.memory.forward) forward += node.net;
    largest = std::max(largest, forward);
  }
  return std::max<int64_t>(1, largest / 4);
}

ColocatedJob PairedRounds::plan(int job_id) const {
  const Profile& p = profiles_.at(job_id);
  ColocatedJob plan;
  plan.groups = node_groups(p.memory, split_bytes());
  plan.ends = group_ends(p.stream, plan.groups);
  plan.peak_bytes = p.peak_bytes;
  plan.resident_bytes = p.resident_bytes;
  return plan;
}

ColocatedJob PairedRounds::plan(const Job& job) const { return plan(job.id()); }

void PairedRounds::profile(Job& job, const std::function<void()>& step) {
  Executor& executor = job.executor();
  NodeMemoryRecorder recorder(job.device().allocator(), job.id(),
                              static_cast<int>(job.model().graph.nodes.size()));
  // The recorder and the job's own observer (its trace), both told of every instruction.
  struct Both final : InstructionObserver {
    InstructionObserver* first;
    InstructionObserver* second;
    void executed(int s, const Instruction& ins, double t0, double t1, int64_t bytes) override {
      first->executed(s, ins, t0, t1, bytes);
      if (second) second->executed(s, ins, t0, t1, bytes);
    }
    void completed(int event, double t) override {
      if (second) second->completed(event, t);
    }
  } both;
  both.first = &recorder;
  both.second = executor.observer();
  recorder.begin();
  executor.set_observer(&both);
  try {
    step();
  } catch (...) {
    executor.set_observer(both.second);
    throw;
  }
  executor.set_observer(both.second);
  // A placed job's one stream is its last (sched/job_placement.hpp).
  profiles_[job.id()] = Profile{recorder.profile(), recorder.step_peak(), recorder.step_start(),
                                executor.rank_program().streams.back()};
}

void PairedRounds::plan_rounds(const std::vector<Job*>& jobs, const std::vector<int>& ids) {
  round_ids_ = ids;
  round_plans_.clear();
  for (Job* job : jobs) round_plans_.push_back(plan(*job));
  round_pairing_ = pair_jobs(round_plans_, memory_limit_, split_bytes());
  // What Algorithm 1 made of the profiles, each time the round's jobs change.
  RunLog& log = jobs.front()->log();
  log.line(
      "co-location: split %lld bytes; %zu jobs' node groups paired (J<job>NG<group>, "
      "jobs in deck order, p = %d):",
      (long long)split_bytes(), jobs.size(), round_pairing_.second_job_in_dv);
  for (size_t j = 0; j < round_plans_.size(); ++j)
    log.line("  J%zu: %s", j + 1, describe_groups(round_plans_[j].groups).c_str());
  log.line("  av: %s", describe_stream(round_pairing_.av).c_str());
  log.line("  dv: %s", describe_stream(round_pairing_.dv).c_str());
}

void PairedRounds::issue(const std::vector<Job*>& jobs) {
  std::vector<int> ids;
  for (Job* job : jobs) ids.push_back(job->id());
  if (ids != round_ids_) plan_rounds(jobs, ids);  // the same jobs every step until one finishes
  const std::vector<ColocatedJob>& plans = round_plans_;
  const ColocatePairing& pairing = round_pairing_;
  for (int k = 0; k < pairing.pairs(); ++k) {
    std::vector<Job*> pair;  // av's group first: alloc_first issues it to its end first
    std::vector<size_t> ends;
    for (const PairSlot& slot : {pairing.av[size_t(k)], pairing.dv[size_t(k)]})
      if (!slot.hole()) {
        pair.push_back(jobs[size_t(slot.job)]);
        ends.push_back(plans[size_t(slot.job)].ends[size_t(slot.group)]);
      }
    issue_in_turn(pair, ends, alloc_first_, "in pair " + std::to_string(k));
    jobs.front()->device().allocator().sync_and_coalesce();  // the pair boundary
  }
}

}  // namespace wt
