#include "app/observers/progress_observer.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "app/process_stats.hpp"
#include "job/job.hpp"

namespace wt {

std::string ProgressObserver::loss_text() const {
  char text[512];  // a diverging loss under failure.on_explosion = "warn" prints in full
  if (window_.samples > 0) {
    std::snprintf(text, sizeof text, "%.4f", window_.loss_sum / window_.samples);
  } else if (metrics_.latest_loss().steps_done > 0) {
    // This rank holds no loss (a pipeline's first stage): the last metrics row's, all ranks.
    std::snprintf(text, sizeof text, "%.4f (step %lld, all ranks)", metrics_.latest_loss().loss,
                  (long long)metrics_.latest_loss().steps_done);
  } else {
    std::snprintf(text, sizeof text, "- (none on this rank yet)");
  }
  return text;
}

void ProgressObserver::after_step(Job& job, const StepRecord& record) {
  window_.loss_sum += record.stats.loss_sum;
  window_.correct += record.stats.correct;
  window_.samples += record.stats.samples;
  ++steps_;
  const double dt = seconds_since(since_);
  if (!job.is_root() || dt < job.config().run.progress_seconds) return;
  const int64_t step = record.step, total = job.total_steps(), per_epoch = job.steps_per_epoch();
  const double rate = steps_ * job.samples_per_step() / dt;
  const double eta = (total - step - 1) * job.samples_per_step() / std::max(rate, 1e-9);
  job.log().line("epoch %lld/%lld step %lld/%lld loss %s lr %.4g %.0f samples/s ETA %s",
                 (long long)(step / per_epoch + 1),
                 (long long)((total + per_epoch - 1) / per_epoch), (long long)(step + 1),
                 (long long)total, loss_text().c_str(), record.lr, rate,
                 format_duration(eta).c_str());
  window_ = StepStats{};
  steps_ = 0;
  since_ = std::chrono::steady_clock::now();
}

}  // namespace wt
