#include "app/background/multiplexer.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "app/background/step_end_arrival.hpp"
#include "exec/executor.hpp"
#include "exec/nonfinite_guard.hpp"
#include "job/job.hpp"
#include "sched/opcode_traits.hpp"
#include "util/steady_seconds.hpp"

namespace wt {

namespace {

constexpr int kMaxDropsInARow = 3;
// A tasklet at a step's end that runs into the next step's first wait ends this long before
// that wait is expected to: this rank's own step end and receive post come first.
constexpr double kLeadMargin_s = 0.3e-3;

}  // namespace

Multiplexer::Multiplexer(Job& foreground, Job& background,
                         std::vector<StepObserver*> background_observers,
                         const RunConfig::Background& settings, const std::string& tasklet_log)
    : fg_(foreground),
      settings_(settings),
      feedback_(foreground.executor().rank_program(),
                {settings.slowdown_target, settings.ewma_fast, settings.ewma_slow}),
      budget_(settings.slowdown_target, settings.solo_every),
      gate_(foreground.executor().rank_program(), feedback_, settings),
      lead_(foreground.executor().rank_program()) {
  adopt_background(&background, std::move(background_observers));
  // Foreground first: no node starts that would run over the foreground's expected wait.
  if (settings_.policy == "foreground_first") settings_.fit_to_wait = true;
  // Before any trace window opens: a trace recorder keeps it informed (trace_recorder.hpp).
  fg_.executor().set_observer(&feedback_);
  log_ = std::fopen(tasklet_log.c_str(), "w");
  if (!log_) throw std::runtime_error("cannot create " + tasklet_log);
  std::fprintf(log_,
               "kind,fg_step,fg_stream,fg_index,fg_waits_on,begin_s,end_s,planned_ms,bg_step,"
               "bg_instructions,idle_left_ms\n");
}

Multiplexer::~Multiplexer() {
  if (log_) std::fclose(log_);
}

void Multiplexer::slow_foreground(int stream, size_t index, double seconds, double times_solo,
                                  int64_t from, int64_t to) {
  slow_ = {stream, index, seconds, times_solo, from, to, -1};
}

void Multiplexer::adopt_background(Job* background, std::vector<StepObserver*> observers) {
  if (bg_) bg_->executor().set_observer(nullptr);
  bg_ = background;
  bg_observers_ = std::move(observers);
  bg_times_.reset();
  background_begun_ = false;
  background_done_ = true;
  if (!bg_) return;
  bg_times_ = std::make_unique<InstructionTimes>(bg_->executor().rank_program());
  bg_stream_ = int(bg_->executor().rank_program().streams.size()) - 1;
  bg_step_ = bg_->start_step();
  background_done_ = bg_step_ >= bg_->total_steps();
  bg_->executor().set_observer(bg_times_.get());
}

double Multiplexer::longest_wait_seconds() const {
  const double step_end = solo_mean(step_end_.solo_runs);
  double longest = step_end > settings_.recv_min_ms * 1e-3 ? step_end : 0;
  const RankProgram& program = fg_.executor().rank_program();
  for (size_t s = 0; s < program.streams.size(); ++s)
    for (size_t i = 0; i < program.streams[s].size(); ++i) {
      const Instruction& ins = program.streams[s][i];
      if (ins.op != OpCode::Wait) continue;
      if (settings_.block_during_allreduce && gate_.producer(ins.event) == OpCode::AllReduce)
        continue;  // never admits background work
      longest = std::max(longest, feedback_.solo().solo_seconds(int(s), i));
    }
  return longest;
}

StepStats Multiplexer::run_step(Job& job, int64_t step, bool quiet_end) {
  if (&job != &fg_) throw std::logic_error("the multiplexer drives its foreground job only");
  // The first warmup_steps steps run alone: the foreground's solo times (feedback_ starts
  // recording them).
  const int64_t warm = fg_.start_step() + settings_.warmup_steps;
  const bool warming_up = step < warm;
  const double late_start = late_start_s_;  // fill_step_end sets it for the step after
  // held: a solo step of the whole job, every rank alike (the warm-up, the run budget's, or
  // every step once no rank has a background left since the refit).
  const bool held = warming_up || !any_rank_multiplexes_ || !budget_admits(step);
  // No background on this rank (left out, finished or stopped): the foreground's own issue
  // loop, unpolled. Its peers' may still run, so the step counts as multiplexed unless held.
  const bool alone = held || !background_active();
  feedback_.set_solo_step(held);
  const double began = steady_seconds();
  fg_.begin_step(step);
  if (alone) {
    CachingAllocator::JobScope account(fg_.device().allocator(), fg_.id());
    fg_.executor().issue_step();
  } else if (settings_.priority) {
    prioritized_step(step);
  } else {
    equal_priority_step(step);
  }
  // The step's own end first: its vote on a non-finite gradient rides on the step-end arrival,
  // so that no rank, done with its step, waits in one more collective for a peer still in a
  // background node.
  const double vote = fg_.finish_local_step(step);
  StepStats stats =
      fg_.finish_voted_step(step, fill_step_end(step, warming_up, held, vote, quiet_end));
  // The first step pays for warm-up allocations, alone or not: it says nothing of either.
  if (step > fg_.start_step()) budget_.record_step(steady_seconds() - began, held, late_start);
  totals_.foreground_slowdown = budget_.slowdown();
  if (step + 1 == warm) {  // the solo times are in: profile the background, then multiplex
    feedback_.set_warming_up(false);
    const double profiling_began = steady_seconds();
    if (refit_) refit_(longest_wait_seconds());
    agree_whether_any_rank_multiplexes();
    profile_background();
    // The foreground waited for it: owed over the rest of the run.
    budget_.charge_over_run(steady_seconds() - profiling_began, fg_.total_steps() - step - 1);
  }
  return stats;
}

// policy = "foreground_first": a step beside background work only while the run's foreground
// has paid no more than slowdown_target so far (and not on the budget's solo steps).
bool Multiplexer::budget_admits(int64_t step) {
  if (settings_.policy != "foreground_first") return true;
  // On several ranks, what every rank's budget said at the last step's end (fill_step_end).
  if (fg_.comm().size() == 1 ? budget_.admits() : step > held_until_) return true;
  totals_.budget_solo_steps++;
  GateResult why;
  why.kind = GateResult::HoldRunBudget;
  hold(why, step);
  return false;
}

// Every rank's step ends in a blocking collective (the non-finite guard's agreement, in
// finish_step): a rank done first would sit in it, idle, for as long as its slowest peer still
// computes (a pipeline's first stage, say). A one-float non-blocking allreduce marks each
// rank's arrival instead, and background tasklets run until every rank has arrived, when that
// wait took longer than recv_min_ms alone (the warm-up steps), and under the same feedback as a
// foreground wait: held while its average since is above target (a tasklet running over the
// peers' arrival delays them all).
double Multiplexer::fill_step_end(int64_t step, bool warming_up, bool held, double vote,
                                  bool quiet_end) {
  lead_.step_ended(held, lead_.found() ? feedback_.last_end(lead_.stream(), lead_.index()) : -1);
  late_start_s_ = 0;
  if (fg_.comm().size() == 1 || !any_rank_multiplexes_) return -1;
  // Inside an agreed streak of solo steps (not its last): nothing to fill, nothing to vote; the
  // step runs exactly as alone, so the budget's solo time carries no collective of its own.
  if (!warming_up && step < held_until_) return -1;
  const bool admit = !held && background_active();
  // It also carries each rank's budget (foreground_first): the steps alone it asks for from the
  // next one on. Every rank runs alone the longest streak any rank asks for, since a step alone
  // beside a peer's background work is no solo step (it waits for that peer), and the budget's
  // solo time would count the background's cost as the foreground's own. This step's time is
  // not known yet: its debt counts from the step after.
  const bool recorded = step > fg_.start_step();  // as run_step records it
  const int64_t streak = settings_.policy != "foreground_first" ? 0
                         : recorded         ? budget_.solo_steps_after_step(/*solo=*/held)
                                 : budget_.admits() ? 0
                                            : 1;
  StepEndArrival arrival(fg_.comm(), streak, vote);
  const FeedbackSettings& feedback = feedback_.settings();
  GateResult why;  // no foreground stream: the step's end
  why.waits_on = OpCode::AllReduce;
  // Like a receive, the peers' arrival admits tasklets only when expected to take longer than
  // recv_min_ms alone (balanced ranks arrive together: a tasklet would only delay them all).
  const double solo = solo_mean(step_end_.solo_runs);
  const bool long_wait = solo > settings_.recv_min_ms * 1e-3;
  if (admit && settings_.feedback && solo >= 0 && step_end_.average_s > feedback.target * solo) {
    why.kind = GateResult::HoldFeedback;
    hold(why, step);
  } else if (admit && long_wait) {
    // A node may run on into the next step's first wait (lead_wait.hpp) when no collective
    // comes first (the votes ride here; quiet_end: nor do the observers'), so no peer waits for
    // it, and ends before that wait is expected to, less kLeadMargin_s for this rank's own
    // step end and receive post. Not into a step this rank's budget runs alone (streak): that
    // step's time is its solo estimate, and a node running on might delay its peer's send.
    const double expected = step_end_.expected_seconds();
    const double after = quiet_end && streak == 0 ? lead_.expected_after_arrival() : -1;
    const double lead = std::max(0.0, after - kLeadMargin_s);
    while (background_active() && !arrival.test()) {
      const double idle_left = expected + lead - (steady_seconds() - arrival.arrived_at());
      if (!run_tasklet(why, step, idle_left)) break;
    }
  }
  arrival.wait();
  const double peers_arrived_at = arrival.last_peer_arrival();  // -1: unknown
  lead_.peers_arrived(peers_arrived_at);
  if (peers_arrived_at >= 0) late_start_s_ = std::max(0.0, steady_seconds() - peers_arrived_at);
  held_until_ = step + arrival.longest_streak();
  const double run = steady_seconds() - arrival.arrived_at();
  if (held) step_end_.add_solo_run(run);
  if (warming_up)
    step_end_.solo_runs.push_back(run);
  else if (solo >= 0)
    step_end_.average_s = slowdown_average(
        feedback, step_end_.average_s >= 0 ? step_end_.average_s : solo, run, solo);
  return arrival.votes();
}

void Multiplexer::StepEndWait::add_solo_run(double seconds) {
  add_run(recent_solo, seconds, SlowdownFeedback::kRecentSoloRuns);
}

double Multiplexer::StepEndWait::expected_seconds() const { return lower_median(recent_solo); }

// After the refit, which may leave a rank's background out: when no rank has one left, the
// step-end arrival has nothing to fill or carry, and every rank drops it alike (a collective).
void Multiplexer::agree_whether_any_rank_multiplexes() {
  double backgrounds = background_active() ? 1 : 0;
  if (fg_.comm().size() > 1) fg_.comm().allreduce_sum(&backgrounds, 1, 0);
  any_rank_multiplexes_ = backgrounds > 0;
}

// The background's first two steps alone, timed instruction by instruction: each
// instruction's faster run cuts its steps into tasklets (the first pays for warm-up
// allocations, and a loaded machine's stall in one would hold that node back for good).
void Multiplexer::profile_background() {
  if (!background_active()) return;  // left out by the refit
  bg_times_->set_recording(true);
  for (int k = 0; k < 2 && background_active(); ++k)
    background_work([&] {
      begin_background_step();
      CachingAllocator::JobScope account(bg_->device().allocator(), bg_->id());
      bg_->executor().issue_step();
      finish_background_step();
    });
  bg_times_->set_recording(false);
  warn_long_nodes();
}

void Multiplexer::warn_long_nodes() {
  if (!settings_.pacing || !bg_) return;
  const auto& stream = bg_->executor().rank_program().streams[size_t(bg_stream_)];
  std::string nodes;
  for (size_t i = 0; i < stream.size(); ++i) {
    const double t = bg_times_->fastest_seconds(bg_stream_, i);
    const Instruction& ins = stream[i];
    if (t * 1e3 <= settings_.tasklet_ms || ins.node_begin < 0) continue;
    char line[160];
    std::snprintf(line, sizeof line, "%s%s %s%s%s %.2f ms", nodes.empty() ? "" : ", ",
                  bg_->model().graph.nodes[size_t(ins.node_begin)].name.c_str(),
                  opcode_traits(ins.op).name, ins.backward_part == BackwardPart::Whole ? "" : " ",
                  backward_part_name(ins.backward_part), t * 1e3);
    nodes += line;
  }
  if (nodes.empty()) return;
  if (settings_.fit_to_wait)
    fg_.log().line(
        "background: nodes longer than background.tasklet_ms = %g ms start only where the "
        "foreground's expected idle time fits them: %s",
        settings_.tasklet_ms, nodes.c_str());
  else
    fg_.log().warning(
        "background: nodes longer than background.tasklet_ms = %g ms run as tasklets of their "
        "own (the foreground waits for them): %s",
        settings_.tasklet_ms, nodes.c_str());
}

void Multiplexer::prioritized_step(int64_t step) {
  Executor& fg = fg_.executor();
  // A step runs the same instructions as the last: a wait found blocked again is a new wait.
  blocked_at_.assign(fg.rank_program().streams.size(), BlockedAt{});
  while (!fg.step_issued()) {
    {
      CachingAllocator::JobScope account(fg_.device().allocator(), fg_.id());
      if (fg.issue_ready(false)) continue;  // the foreground first, always
    }
    apply_slow_hook(step);
    if (background_active()) {
      const GateResult why = gate_.check(fg);
      if (why.admits()) {
        const double idle_left = expected_idle_left(fg);
        bool ran = false;
        for (int64_t d = 0; d < settings_.depth && background_active(); ++d)
          ran = run_tasklet(why, step, idle_left) || ran;
        if (ran) continue;  // the foreground's events are checked again
      } else {
        hold(why, step);
      }
    }
    fg.wait_for_progress();
  }
}

void Multiplexer::equal_priority_step(int64_t step) {
  Executor& fg = fg_.executor();
  const GateResult none;
  while (!fg.step_issued()) {
    bool progressed;
    {
      CachingAllocator::JobScope account(fg_.device().allocator(), fg_.id());
      progressed = fg.issue_ready(true);
    }
    if (background_active() && run_tasklet(none, step, kNoBound)) continue;
    if (!progressed) fg.wait_for_progress();
  }
}

// The foreground's blocked waits: how much of the shortest one's expected time (the median of
// its recent runs alone) is left (kNoBound when none is known). A wait is timed from when the
// multiplexer first finds its stream blocked there.
double Multiplexer::expected_idle_left(const Executor& fg) {
  const double now = steady_seconds();
  double left = kNoBound;
  const int streams = int(fg.rank_program().streams.size());
  for (int s = 0; s < streams; ++s) {
    const Instruction* wait = fg.next_instruction(s);
    if (!wait) continue;
    BlockedAt& blocked = blocked_at_[size_t(s)];
    if (blocked.wait != wait) {
      const size_t index = feedback_.solo().index_of(s, *wait);
      blocked = {wait, now, feedback_.expected_seconds(s, index)};
      // The step's first wait: from the peers' arrival at the last step's end, when known.
      const double after = lead_.expected_after_arrival();
      if (lead_.is(s, index) && lead_.arrival() >= 0 && after >= 0)
        blocked = {wait, lead_.arrival(), after};
    }
    if (blocked.expected >= 0) left = std::min(left, blocked.expected - (now - blocked.since));
  }
  return left;
}

bool Multiplexer::run_tasklet(const GateResult& why, int64_t step, double idle_left_s) {
  if (!background_active()) return false;
  // A device with queued work (the strict device, which runs it lazily; a GPU's queues): a
  // tasklet's blocking kernels (a readback) would wait for the foreground's queued work, which
  // may wait on communication only the foreground's issue loop progresses: a deadlock.
  if (!fg_.device().events().idle()) return false;
  const double begin = steady_seconds();
  double planned_s = 0;
  int count = 0;
  const int64_t bg_step = bg_step_;
  background_work([&] {
    if (!background_begun_) begin_background_step();
    issue_tasklet(planned_s, count, settings_.fit_to_wait ? idle_left_s : kNoBound);
  });
  if (count == 0 && background_begun_) {  // its next node would outlast the idle time left
    GateResult too_long = why;
    too_long.kind = GateResult::HoldNodeTooLong;
    hold(too_long, step);
    return false;
  }
  const double end = steady_seconds();
  totals_.tasklets++;
  totals_.background_seconds += end - begin;
  log_row(settings_.priority ? "tasklet" : "tasklet_equal", why, step, begin, end, planned_s,
          bg_step, count, idle_left_s);
  return true;
}

// Background instructions while their profiled times fit in tasklet_ms (at least one) and in the
// foreground's expected idle time left (none when the first does not fit), the foreground's
// communication polled after each; a step's end ends the tasklet.
void Multiplexer::issue_tasklet(double& planned_s, int& count, double idle_left_s) {
  Executor& bg = bg_->executor();
  const double bound_s = settings_.tasklet_ms * 1e-3;
  while (const Instruction* next = bg.next_instruction(bg_stream_)) {
    const double t = std::max(
        0.0, bg_times_->fastest_seconds(bg_stream_, bg_times_->index_of(bg_stream_, *next)));
    if (settings_.pacing && count > 0 && planned_s + t > bound_s) return;
    if (planned_s + t > idle_left_s) return;
    {
      CachingAllocator::JobScope account(bg_->device().allocator(), bg_->id());
      if (!bg.issue_ready(true)) {
        bg.wait_for_progress();  // a local event: it completes, or this throws (a deadlock)
        continue;
      }
    }
    planned_s += t;
    ++count;
    {
      CachingAllocator::JobScope account(fg_.device().allocator(), fg_.id());
      fg_.executor().poll_communication();
    }
  }
  finish_background_step();
}

void Multiplexer::begin_background_step() {
  for (StepObserver* o : bg_observers_) o->before_step(*bg_, bg_step_);
  background_step_began_ = steady_seconds();
  bg_->begin_step(bg_step_);
  background_begun_ = true;
}

void Multiplexer::finish_background_step() {
  StepRecord record;
  record.step = bg_step_;
  record.stats = bg_->finish_step(bg_step_);
  record.lr = bg_->learning_rate_now();
  record.seconds = steady_seconds() - background_step_began_;
  background_begun_ = false;
  consecutive_drops_ = 0;
  totals_.background_steps++;
  for (StepObserver* o : bg_observers_) o->after_step(*bg_, record);
  background_done_ = ++bg_step_ >= bg_->total_steps();
}

bool Multiplexer::background_work(const std::function<void()>& work) {
  try {
    work();
    return true;
  } catch (const OutOfMemory& e) {
    try {
      drop_background_step(e);
    } catch (const std::exception& again) {  // its observers failed on the dropped step
      stop_background(again);
    }
  } catch (const std::exception& e) {
    stop_background(e);
  }
  return false;
}

void Multiplexer::stop_background(const std::exception& error) {
  if (background_begun_) {
    try {  // it never runs again: only its step's tensors go back
      CachingAllocator::JobScope account(bg_->device().allocator(), bg_->id());
      bg_->executor().abandon_step();
    } catch (const std::exception&) {
    }
    background_begun_ = false;
  }
  background_done_ = true;
  const bool diverged = dynamic_cast<const Diverged*>(&error) != nullptr;
  totals_.stopped = std::string(diverged ? "diverged: " : "") + error.what();
  try {
    bg_->source().quiesce();  // no read of its data outlives it
    bg_->log().warning("background job stopped at its step %lld: %s; the foreground trains on",
                       (long long)(bg_step_ + 1), totals_.stopped.c_str());
  } catch (const std::exception&) {  // its log on a full disk: the foreground's says it too
  }
  fg_.log().warning("background job on rank %d stopped at its step %lld: %s", fg_.comm().rank(),
                    (long long)(bg_step_ + 1), totals_.stopped.c_str());
}

void Multiplexer::drop_background_step(const OutOfMemory& error) {
  {
    CachingAllocator::JobScope account(bg_->device().allocator(), bg_->id());
    bg_->executor().abandon_step();
  }
  bg_->log().warning("background step %lld dropped: %s", (long long)(bg_step_ + 1), error.what());
  totals_.dropped_steps++;
  StepRecord record;  // empty stats: no loss of it reaches the metrics
  record.step = bg_step_;
  record.lr = bg_->learning_rate_now();
  record.seconds = steady_seconds() - background_step_began_;
  background_begun_ = false;
  for (StepObserver* o : bg_observers_) o->after_step(*bg_, record);
  background_done_ = ++bg_step_ >= bg_->total_steps();
  if (++consecutive_drops_ >= kMaxDropsInARow && !background_done_) {
    background_done_ = true;
    const std::string why = "background job stopped: " + std::to_string(kMaxDropsInARow) +
                            " steps in a row did not fit its memory (" + error.what() + ")";
    bg_->log().warning("%s", why.c_str());
    fg_.log().warning("%s", why.c_str());
  }
}

void Multiplexer::hold(const GateResult& why, int64_t step) {
  if (step != last_hold_step_) {
    last_hold_step_ = step;
    logged_holds_.clear();
  }
  const int key = int(why.kind) * 1000000 + why.stream * 100000 + int(why.index);
  if (std::find(logged_holds_.begin(), logged_holds_.end(), key) != logged_holds_.end()) return;
  logged_holds_.push_back(key);
  totals_.holds++;
  const double t = steady_seconds();
  log_row(why.name(), why, step, t, t, 0, bg_step_, 0, kNoBound);
}

void Multiplexer::apply_slow_hook(int64_t step) {
  if (slow_.stream < 0 || step < slow_.from || step >= slow_.to || slow_.slowed_step == step)
    return;
  const Instruction* next = fg_.executor().next_instruction(slow_.stream);
  if (!next || feedback_.solo().index_of(slow_.stream, *next) != slow_.index) return;
  slow_.slowed_step = step;
  const double solo = std::max(0.0, feedback_.solo().solo_seconds(slow_.stream, slow_.index));
  std::this_thread::sleep_for(
      std::chrono::duration<double>(slow_.seconds + slow_.times_solo * solo));
}

void Multiplexer::log_row(const char* kind, const GateResult& why, int64_t step, double begin,
                          double end, double planned_s, int64_t bg_step, int instructions,
                          double idle_left_s) {
  std::fprintf(log_, "%s,%lld,%d,%zu,%s,%.9f,%.9f,%.4f,%lld,%d,%.4f\n", kind, (long long)step,
               why.stream, why.index, why.stream < 0 ? "" : opcode_traits(why.waits_on).name, begin,
               end, planned_s * 1e3, (long long)bg_step, instructions,
               idle_left_s >= kNoBound ? -1.0 : idle_left_s * 1e3);
}

void Multiplexer::finish() {
  if (!bg_) return;  // it was left out
  if (background_begun_ && background_active())
    background_work([&] {
      CachingAllocator::JobScope account(bg_->device().allocator(), bg_->id());
      bg_->executor().issue_step();
      finish_background_step();
    });
  std::fflush(log_);
  if (!totals_.stopped.empty()) return;  // no end checkpoint of a failed job: its last one stays
  // It ends with the foreground: its end checkpoint and summary name the step it reached.
  if (bg_step_ < bg_->total_steps()) bg_->end_after(bg_step_);
  try {  // no step left to drop: any failure here (its final evaluation's memory) stops it
    bg_->source().quiesce();
    for (StepObserver* o : bg_observers_) o->finish(*bg_);
  } catch (const std::exception& e) {
    stop_background(e);
  }
}

}  // namespace wt
