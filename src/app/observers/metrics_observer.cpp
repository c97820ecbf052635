#include "app/observers/metrics_observer.hpp"

#include <cmath>
#include <string>

#include "app/process_stats.hpp"
#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

MetricsObserver::MetricsObserver(std::chrono::steady_clock::time_point run_start,
                                 const RunConfig::Failure& failure)
    : run_start_(run_start),
      window_start_(std::chrono::steady_clock::now()),
      explosions_(failure.on_explosion, failure.explosion_factor) {}

MetricsRow MetricsObserver::row(Job& job, const char* kind, int64_t steps_done) const {
  MetricsRow row;
  row.kind = kind;
  row.step = steps_done;
  row.epoch = double(steps_done) / job.steps_per_epoch();
  row.lr = job.learning_rate_now();
  row.wall_s = job.resumed_wall_seconds() + seconds_since(run_start_);
  const MemoryStats memory = job.device().allocator().stats();
  row.peak_device_mb = memory.peak_reserved / 1048576.0;
  row.peak_in_use_mb = job.device().allocator().job_stats(job.id()).peak_in_use / 1048576.0;
  row.forced_syncs = int64_t(memory.forced_syncs);
  row.fragmentation = memory.fragmentation();
  row.system_allocations = int64_t(memory.system_allocations);
  row.rss_mb = peak_rss_mb();
  return row;
}

bool MetricsObserver::may_communicate_after(const Job& job, int64_t step) const {
  return (step + 1) % job.config().train.log_every_steps == 0 || job.epoch_ends_after(step);
}

void MetricsObserver::after_step(Job& job, const StepRecord& record) {
  window_.loss_sum += record.stats.loss_sum;
  window_.correct += record.stats.correct;
  window_.samples += record.stats.samples;
  ++steps_;
  const int64_t done = record.step + 1;
  if (!may_communicate_after(job, record.step)) return;
  const PreloadStats preload = job.source().preload_stats();
  double v[5] = {window_.loss_sum, window_.correct, double(window_.samples), double(preload.hits),
                 double(preload.misses)};
  job.comm().allreduce_sum(v, 5, 0);
  // A non-finite loss whose gradient stayed finite; the sum is the same on every rank.
  if (!std::isfinite(v[0]) && job.config().failure.on_nonfinite == "stop")
    throw Diverged("non-finite loss/gradient at step " + std::to_string(done) +
                   " (training loss summed over the last " + std::to_string(steps_) +
                   " steps is not finite)");
  if (v[2] > 0) {
    latest_ = {v[0] / v[2], done};
    const std::string exploded = explosions_.check(done, v[0] / v[2], steps_);
    if (!exploded.empty() && explosions_.stops())
      throw Diverged(exploded + "; failure.on_explosion = \"warn\" only reports it");
    if (!exploded.empty()) job.log().warning("%s", exploded.c_str());
  }
  if (MetricsWriter* metrics = job.metrics()) {
    MetricsRow r = row(job, "train", done);
    r.loss = v[2] > 0 ? v[0] / v[2] : 0;
    r.accuracy = v[2] > 0 ? v[1] / v[2] : 0;
    r.samples_per_s = steps_ * job.samples_per_step() / seconds_since(window_start_);
    r.preload_hits = int64_t(v[3]);
    r.preload_misses = int64_t(v[4]);
    metrics->write(r);
  }
  window_ = StepStats{};
  steps_ = 0;
  restart_clock();
}

}  // namespace wt
