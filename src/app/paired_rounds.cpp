#include "app/paired_rounds.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

void PairedRounds::issue(const std::vector<Job*>& jobs) {
  std::vector<ColocatedJob> plans;
  for (Job* job : jobs) plans.push_back(plan(*job));
  const ColocatePairing pairing = pair_jobs(plans, memory_limit_, split_bytes());
  if (!logged_) {  // the rounds' plan, once: what Algorithm 1 made of the profiles
    logged_ = true;
    RunLog& log = jobs.front()->log();
    log.line("co-location: split %lld bytes; %zu jobs' node groups paired (J<job>NG<group>, "
             "jobs in deck order, p = %d):",
             (long long)split_bytes(), jobs.size(), pairing.second_job_in_dv);
    for (size_t j = 0; j < plans.size(); ++j)
      log.line("  J%zu: %s", j + 1, describe_groups(plans[j].groups).c_str());
    log.line("  av: %s", describe_stream(pairing.av).c_str());
    log.line("  dv: %s", describe_stream(pairing.dv).c_str());
  }
  for (int k = 0; k < pairing.pairs(); ++k) {
    struct Target {
      Job* job;
      size_t end;
    };
    std::vector<Target> targets;
    for (const PairSlot& slot : {pairing.av[size_t(k)], pairing.dv[size_t(k)]})
      if (!slot.hole())
        targets.push_back(
            {jobs[size_t(slot.job)], plans[size_t(slot.job)].ends[size_t(slot.group)]});
    for (bool reached = false; !reached;) {
      reached = true;
      bool progressed = false;
      for (const Target& t : targets) {  // the pair's two groups, one instruction each in turn
        Executor& executor = t.job->executor();
        if (executor.issued_this_step() >= t.end) continue;
        reached = false;
        CachingAllocator::JobScope account(t.job->device().allocator(), t.job->id());
        progressed = executor.issue_ready(true) || progressed;
        if (alloc_first_) break;  // av's group to its end first
      }
      if (reached || progressed) continue;
      for (const Target& t : targets) progressed = t.job->executor().try_progress() || progressed;
      if (!progressed)
        throw std::logic_error("co-located jobs deadlocked in pair " + std::to_string(k));
    }
    jobs.front()->device().allocator().sync_and_coalesce();  // the pair boundary
  }
}

}  // namespace wt
