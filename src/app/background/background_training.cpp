#include "app/background/background_training.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "app/background/background_split.hpp"
#include "app/job_observers.hpp"
#include "comm/failure_agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "deck/deck_parser.hpp"
#include "job/job.hpp"

namespace fs = std::filesystem;

namespace wt {

void check_background_deck(const RunConfig& deck) {
  if (deck.schedule.kind != "gang")
    throw deck_error(deck, "schedule.kind",
                     "a background job runs alone on its rank and never communicates: it needs "
                     "schedule.kind = \"gang\" (one rank), got \"" +
                         deck.schedule.kind + "\"");
  if (!deck.burst.ranks.empty())
    throw deck_error(deck, "burst.ranks", "a background job runs on one rank: remove burst.ranks");
  if (deck.data.distribution != "shard")
    throw deck_error(deck, "data.distribution",
                     "a background job reads its own data on its rank: it needs \"shard\", got "
                     "\"" +
                         deck.data.distribution + "\"");
  if (!deck.background.deck.empty())
    throw deck_error(deck, "background.deck", "a background job cannot have a background job");
  if (!deck.colocate.decks.empty())
    throw deck_error(deck, "colocate.decks", "a background job cannot co-locate other jobs");
}

namespace {

// WAVETRAIN_TEST_SLOW_FOREGROUND="stream:index:milliseconds:from_step:to_step" (tests only);
// "xF" instead of milliseconds: F times the instruction's solo time.
void plant_slow_foreground(Multiplexer& multiplexer) {
  const char* hook = std::getenv("WAVETRAIN_TEST_SLOW_FOREGROUND");
  if (!hook || !*hook) return;
  std::istringstream in(hook);
  int stream = 0;
  size_t index = 0;
  double amount = 0;
  long long from = 0, to = 0;
  char c1, c2, c3, c4;
  in >> stream >> c1 >> index >> c2;
  const bool times_solo = in.peek() == 'x';  // "x50": 50 times the instruction's solo time
  if (times_solo) in.get();
  if (!(in >> amount >> c3 >> from >> c4 >> to))
    throw std::invalid_argument(std::string("WAVETRAIN_TEST_SLOW_FOREGROUND: cannot read '") +
                                hook + "' as stream:index:milliseconds|xFACTOR:from_step:to_step");
  multiplexer.slow_foreground(stream, index, times_solo ? 0 : amount * 1e-3,
                              times_solo ? amount : 0, from, to);
}

// WAVETRAIN_TEST_BUDGET_DEBT="rank:seconds" (tests only): that rank's run budget starts that far
// in debt, as if its background had cost the foreground so much more than its peers'.
void plant_budget_debt(Multiplexer& multiplexer, int rank) {
  const char* hook = std::getenv("WAVETRAIN_TEST_BUDGET_DEBT");
  if (!hook || !*hook) return;
  int on_rank = -1;
  double seconds = 0;
  if (std::sscanf(hook, "%d:%lf", &on_rank, &seconds) != 2)
    throw std::invalid_argument(std::string("WAVETRAIN_TEST_BUDGET_DEBT: cannot read '") + hook +
                                "' as rank:seconds");
  if (on_rank == rank) multiplexer.charge_budget(seconds);
}

// The nodes whose backward the background's program runs in halves ("conv2"; "" when none).
std::string halved_nodes(Job& job) {
  std::set<int> nodes;
  for (const auto& stream : job.executor().rank_program().streams)
    for (const Instruction& ins : stream)
      if (ins.backward_part == BackwardPart::InputGradient) nodes.insert(ins.node_begin);
  std::string names;
  for (int n : nodes)
    names += (names.empty() ? "" : ", ") + job.model().graph.nodes[size_t(n)].name;
  return names;
}

}  // namespace

BackgroundTraining::BackgroundTraining(const RunConfig& foreground_config,
                                       const TrainOptions& options, Job& foreground,
                                       Communicator& world,
                                       std::chrono::steady_clock::time_point t_start)
    : foreground_(foreground) {
  agree_on_failure(world, [&] {
    const fs::path base = fs::path(foreground_config.deck_path).parent_path();
    deck_ = parse_deck((base / foreground_config.background.deck).string());
    check_background_deck(deck_);
  });
  if (options.restart || !options.restart_from.empty() ||
      foreground_config.checkpoint.restart == "auto")
    deck_.checkpoint.restart = "auto";  // its newest checkpoint, if it wrote one
  if (foreground_config.background.memory_limit > 0)
    foreground.device().allocator().set_job_limit(
        1, static_cast<size_t>(foreground_config.background.memory_limit));
  agree_on_failure(world, [&] { start(foreground_config, foreground, world, t_start); });
}

BackgroundTraining::~BackgroundTraining() = default;

void BackgroundTraining::start(const RunConfig& foreground_config, Job& foreground,
                               Communicator& world, std::chrono::steady_clock::time_point t_start) {
  JobOptions o;
  o.run_dir =
      (fs::path(foreground.run_dir()) / "background" / ("rank_" + std::to_string(world.rank())))
          .string();
  o.quiet = true;
  o.guard_earlier_run = false;  // inside the foreground's directory, whose run decided already
  o.id = 1;                     // its memory account on the shared device
  // Its own stream after the foreground's, and its passes node by node: tasklets are node ranges.
  o.colocated_stream = int(foreground.executor().rank_program().streams.size());
  o.split_backward = foreground_config.background.split_backward &&
                     foreground_config.background.policy == "foreground_first";
  o.log_prefix = "[background " + std::to_string(world.rank()) + "] ";
  self_ = std::make_unique<MpiCommunicator>(MPI_COMM_SELF);
  job_options_ = o;
  t_start_ = t_start;
  try {
    split_long_nodes(foreground_config.background, o, foreground);
    build_job(microbatches_);
    const std::string halved = halved_nodes(*job_);
    if (!halved.empty())
      foreground.log().line(
          "background: the backward of %s runs in halves (its input's gradient, then its "
          "weights'), so each fits a shorter idle time",
          halved.c_str());
  } catch (const OutOfMemory& e) {
    foreground.log().warning("background job not started: %s (background.memory_limit = %lld)",
                             e.what(), (long long)foreground_config.background.memory_limit);
    observers_.reset();
    job_.reset();
    return;
  }
  multiplexer_ = std::make_unique<Multiplexer>(foreground, *job_, observers_->list(),
                                               foreground_config.background,
                                               job_->run_dir() + "/tasklets.csv");
  // Its longest node timed (foreground_first, no split forced): the split refitted, or the
  // background left out, to this rank's waits. Not on a device that queues its work (strict,
  // cuda), whose host-side times are those of issuing it: they would leave every background out.
  if (longest_node_.whole_batch_s > 0 && foreground.device().kind() == DeviceKind::Host)
    multiplexer_->set_refit([this, settings = foreground_config.background](double wait_s) {
      refit(settings, wait_s);
    });
  plant_slow_foreground(*multiplexer_);
  plant_budget_debt(*multiplexer_, world.rank());
}

void BackgroundTraining::build_job(int64_t microbatches) {
  deck_ = unsplit_deck_;
  split_background_batch(deck_, microbatches);
  job_ = std::make_unique<Job>(deck_, job_options_, foreground_.device(), 0, 1);
  job_->start(*self_);
  TrainOptions options;
  options.quiet = true;
  observers_ = std::make_unique<JobObservers>(*job_, deck_, options, t_start_);
  microbatches_ = microbatches;
}

void BackgroundTraining::split_long_nodes(const RunConfig::Background& settings,
                                          const JobOptions& options, Job& foreground) {
  unsplit_deck_ = deck_;
  microbatches_ = std::max<int64_t>(1, settings.microbatches);
  if (settings.microbatches != 0 || settings.policy != "foreground_first") return;
  try {
    longest_node_ =
        probe_longest_node(deck_, options, options.run_dir + "_probe", foreground.device(), *self_);
  } catch (const OutOfMemory&) {
    throw;                             // its steps do not fit: left out, as at its start
  } catch (const std::exception& e) {  // a diverging copy, say: the job itself will say so
    foreground.log().warning("background: its nodes could not be timed (%s); it trains unsplit",
                             e.what());
  }
  if (longest_node_.whole_batch_s <= 0) return;  // not timed: unsplit
  microbatches_ = microbatches_to_fit(longest_node_, settings.tasklet_ms * 1e-3);
  if (microbatches_ > 1)
    foreground.log().line(
        "background: its longest node takes %.2f ms (%.2f ms on one sample), over "
        "background.tasklet_ms = %g: it trains on %lld micro-batches of its global batch %lld, "
        "gradients accumulated",
        longest_node_.whole_batch_s * 1e3, longest_node_.one_sample_s * 1e3, settings.tasklet_ms,
        (long long)microbatches_, (long long)deck_.train.global_batch);
}

// After the foreground's warm-up (foreground_first, its split chosen by the tasklet): a
// micro-batch of one sample runs a lenet at a fraction of its batch-8 rate, and a node only
// needs to fit the idle time this rank actually has. The fewest micro-batches whose longest
// node fits half the longest wait (so it starts in that wait with room to spare) replace the
// tasklet's split; nothing has trained yet, so the background is rebuilt with it (the earlier
// split again should the coarser one not fit the background's memory).
void BackgroundTraining::refit(const RunConfig::Background& settings, double longest_wait_s) {
  const int64_t coarser =
      microbatches_to_fit(longest_node_, std::max(settings.tasklet_ms * 1e-3, longest_wait_s / 2));
  if (coarser >= microbatches_) {  // no coarser split fits: does the tasklet's?
    leave_out_if_nothing_fits(longest_wait_s);
    return;
  }
  const int64_t earlier = microbatches_;
  multiplexer_->adopt_background(nullptr, {});
  for (int64_t m : {coarser, earlier}) {
    observers_.reset();
    job_.reset();
    try {
      build_job(m);
      multiplexer_->adopt_background(job_.get(), observers_->list());
      log_on_both(
          "background: the foreground's longest wait on rank %d takes %.2f ms: the background "
          "trains on %lld micro-batches of its global batch %lld (its longest node %.2f ms)",
          foreground_.comm().rank(), longest_wait_s * 1e3, (long long)m,
          (long long)deck_.train.global_batch, longest_node_.at(longest_node_.batch / m) * 1e3);
      return;
    } catch (const OutOfMemory& e) {
      foreground_.log().warning("background: %lld micro-batches do not fit its memory (%s)",
                                (long long)m, e.what());
    } catch (const std::exception& e) {
      foreground_.log().warning("background job left out on rank %d: %s", foreground_.comm().rank(),
                                e.what());
      break;
    }
  }
  observers_.reset();
  job_.reset();
}

// The tasklet's split is as fine as the refit goes (finer micro-batches run a sample at a
// fraction of the batch's rate). A rank whose longest wait is under twice its longest node
// there (an mlp foreground's sub-millisecond waits beside a lenet background) would start a
// node in a wait's first moments only, if ever, yet pay for polling its waits, the step-end
// arrival and the profiling steps: its background is left out, and the foreground trains alone.
void BackgroundTraining::leave_out_if_nothing_fits(double longest_wait_s) {
  const double node_s = longest_node_.at(longest_node_.batch / microbatches_);
  if (node_s <= longest_wait_s / 2) return;
  log_on_both(
      "background left out on rank %d: the foreground's longest wait there takes %.3f ms, under "
      "twice the background's longest node on %lld micro-batches of its global batch %lld (%.3f "
      "ms): its nodes would not fit the idle time",
      foreground_.comm().rank(), longest_wait_s * 1e3, (long long)microbatches_,
      (long long)deck_.train.global_batch, node_s * 1e3);
  multiplexer_->adopt_background(nullptr, {});
  observers_.reset();
  job_.reset();
}

void BackgroundTraining::finish() {
  if (!multiplexer_) return;
  multiplexer_->finish();
  const MultiplexTotals& t = multiplexer_->totals();
  const CachingAllocator& allocator = foreground_.device().allocator();
  char budget[64] = ", no device.memory_limit";
  if (allocator.limit() > 0)
    std::snprintf(budget, sizeof budget, " of budget %.1f MB", allocator.limit() / 1e6);
  foreground_.log().line(
      "background: %lld steps (%lld dropped%s), %lld tasklets, %.3f s in tasklets, %lld holds, "
      "%lld foreground steps alone by the run budget, foreground steps %.3fx their solo time; "
      "device memory peak %.1f MB%s (foreground %.1f MB, background %.1f MB)",
      (long long)t.background_steps, (long long)t.dropped_steps,
      t.stopped.empty() ? "" : ", then stopped on a failure", (long long)t.tasklets,
      t.background_seconds, (long long)t.holds, (long long)t.budget_solo_steps,
      t.foreground_slowdown, allocator.stats().peak_in_use / 1e6, budget,
      allocator.job_stats(0).peak_in_use / 1e6, allocator.job_stats(1).peak_in_use / 1e6);
}

}  // namespace wt
