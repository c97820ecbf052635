#include "app/observers/evaluation_observer.hpp"

#include <cmath>
#include <cstdio>

#include "app/process_stats.hpp"
#include "job/job.hpp"

namespace wt {

bool EvaluationObserver::may_communicate_after(const Job& job, int64_t step) const {
  return job.epoch_ends_after(step) && job.no_evaluation_reason().empty();
}

void EvaluationObserver::after_step(Job& job, const StepRecord& record) {
  const int64_t done = record.step + 1, per_epoch = job.steps_per_epoch();
  if (!may_communicate_after(job, record.step)) return;
  const StepStats e = job.evaluate();
  accuracy_ = e.samples ? e.correct / e.samples : 0;
  loss_ = e.samples ? e.loss_sum / e.samples : 0;
  // Per-token losses are means over tokens in nats; bits per token (per character for a
  // character model) is the figure language models are compared by.
  char bits[48] = "";
  if (job.labels_per_sample() > 1)
    std::snprintf(bits, sizeof bits, " = %.4f bits per token", loss_ / std::log(2.0));
  job.log().line("epoch %lld done: test accuracy %.4f, test loss %.4f%s (%lld samples), %s elapsed",
                 (long long)((done + per_epoch - 1) / per_epoch), accuracy_, loss_, bits,
                 (long long)e.samples, format_duration(seconds_since(run_start_)).c_str());
  if (MetricsWriter* metrics = job.metrics()) {
    MetricsRow row = metrics_.row(job, "eval", done);
    row.loss = loss_;
    row.accuracy = accuracy_;
    metrics->write(row);
  }
  metrics_.restart_clock();
}

}  // namespace wt
