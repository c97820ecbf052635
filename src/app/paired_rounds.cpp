#include "app/paired_rounds.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "app/issue_in_turn.hpp"
#include "app/text_format.hpp"
#include "exec/node_memory_recorder.hpp"
#include "job/job.hpp"
#include "plan/byte_pairing.hpp"
#include "plan/colocated_program.hpp"
#include "plan/split_choice.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

PairedRounds::PairedRounds(const RoundOptions& round, int64_t split_bytes, bool alloc_first)
    : options_(round), split_bytes_(split_bytes), alloc_first_(alloc_first) {
  if (split_bytes < 0) throw std::invalid_argument("co-location needs split_bytes >= 0");
}

bool PairedRounds::profiled(const Job& job) const { return profiles_.count(job.id()) > 0; }

std::vector<NodeGroup> PairedRounds::groups(int job_id) const {
  for (size_t j = 0; j < round_ids_.size(); ++j)
    if (round_ids_[j] == job_id) return round_.groups[j];
  return {};
}

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
  Profile& p = profiles_[job.id()];
  p.job = ProfiledJob{recorder.profile(), recorder.step_peak(), recorder.step_start()};
  p.stream = executor.rank_program().streams.back();
}

namespace {

// The combined program of the round passes validate_program under both communication rules
// (a failure is a bug in the plan, not bad input).
void validate_round(const std::vector<Job*>& jobs, const RoundPlan& round) {
  std::vector<Program> programs;
  std::vector<int> streams;
  int stages = 1;
  for (Job* job : jobs) {
    programs.push_back(job->program());
    streams.push_back(static_cast<int>(job->program().ranks.at(0).streams.size()) - 1);
    stages = std::max(stages, static_cast<int>(job->model().stages.size()));
  }
  const Program combined = colocated_program(programs, round.groups, round.pairing, streams);
  validate_program(combined, stages, CommRules::Mpi);
  validate_program(combined, stages, CommRules::Nccl);
}

std::string megabytes(int64_t bytes) { return format_number("%.1f MB", double(bytes) / 1e6); }

}  // namespace

void PairedRounds::plan_rounds(const std::vector<Job*>& jobs, const std::vector<int>& ids) {
  round_ids_ = ids;
  std::vector<ProfiledJob> profiled;
  for (Job* job : jobs) profiled.push_back(profiles_.at(job->id()).job);
  std::string split;
  round_ = plan_colocated_round(profiled, options_, split_bytes_, &split);
  round_ends_.clear();
  for (Job* job : jobs)
    round_ends_.push_back(
        group_ends(profiles_.at(job->id()).stream, round_.groups.at(round_ends_.size())));
  validate_round(jobs, round_);
  // What the plan made of the profiles, each time the round's jobs change.
  RunLog& log = jobs.front()->log();
  log.line(
      "co-location: %s; %zu jobs' node groups paired by %s in %d pairs (%.0f%% of groups "
      "beside another's); round peak predicted %s (%lld bytes) at pair %d. J<job>NG<group>, "
      "jobs in deck order; ! a node over the split, a group of its own:",
      split.c_str(), jobs.size(), options_.pairing == Pairing::Bytes ? "bytes" : "index",
      round_.pairing.pairs(), 100 * paired_fraction(round_.pairing),
      megabytes(round_.memory.peak).c_str(), (long long)round_.memory.peak,
      round_.memory.peak_pair + 1);
  for (size_t j = 0; j < round_.groups.size(); ++j)
    log.line("  J%zu: %s", j + 1,
             describe_groups(round_.groups[j], jobs[j]->model().graph.nodes.size()).c_str());
  log.line("  av: %s", describe_stream(round_.pairing.av).c_str());
  log.line("  dv: %s", describe_stream(round_.pairing.dv).c_str());
}

void PairedRounds::issue(const std::vector<Job*>& jobs) {
  std::vector<int> ids;
  for (Job* job : jobs) ids.push_back(job->id());
  if (ids != round_ids_) plan_rounds(jobs, ids);  // the same jobs every step until one finishes
  const ColocatePairing& pairing = round_.pairing;
  for (int k = 0; k < pairing.pairs(); ++k) {
    std::vector<Job*> pair;  // av's group first: alloc_first issues it to its end first
    std::vector<size_t> ends;
    for (const PairSlot& slot : {pairing.av[size_t(k)], pairing.dv[size_t(k)]})
      if (!slot.hole()) {
        pair.push_back(jobs[size_t(slot.job)]);
        ends.push_back(round_ends_[size_t(slot.job)][size_t(slot.group)]);
      }
    issue_in_turn(pair, ends, alloc_first_, "in pair " + std::to_string(k));
    jobs.front()->device().allocator().sync_and_coalesce();  // the pair boundary
  }
}

}  // namespace wt
