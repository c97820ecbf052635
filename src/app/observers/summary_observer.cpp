#include "app/observers/summary_observer.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "app/process_stats.hpp"
#include "app/text_format.hpp"
#include "io/checked_file.hpp"
#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

SummaryObserver::SummaryObserver(Job& job, std::chrono::steady_clock::time_point run_start,
                                 const EvaluationObserver& evaluation)
    : run_start_(run_start),
      evaluation_(evaluation),
      step_times_(job.total_steps() - job.start_step()),
      issue_times_(job.total_steps() - job.start_step()) {
  result_.start_step = job.start_step();
}

void SummaryObserver::after_step(Job& job, const StepRecord& record) {
  step_times_.add(record.seconds);
  issue_times_.add(job.executor().last_issue_seconds());
  ++steps_run_;
  // After the first step, whose first uses allocate (and zero) the step's results and the
  // optimizer's state once.
  if (record.step > result_.start_step)
    most_synchronizations_ = std::max(most_synchronizations_, record.device_synchronizations);
}

namespace {

// A JSON array of numbers.
std::string json_array(const std::vector<double>& values) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < values.size(); ++i) s << (i ? ", " : "") << values[i];
  s << "]";
  return s.str();
}

}  // namespace

void SummaryObserver::write_summary(Job& job, double peak_rss_mb,
                                    const std::vector<double>& rank_peak_device_mb,
                                    const std::vector<double>& rank_peak_in_use_mb) const {
  const MemoryStats memory = job.device().allocator().stats();
  std::ostringstream s;
  s << "{\n  \"model\": \"" << job.model().graph.name << "\",\n  \"schedule\": \""
    << job.config().schedule.kind << "\",\n  \"ranks\": " << job.comm().size()
    << ",\n  \"steps\": " << result_.steps << ",\n  \"resumed_from_step\": " << result_.start_step
    << ",\n  \"skipped_steps\": " << result_.skipped_steps
    << ",\n  \"global_batch\": " << job.config().train.global_batch
    << ",\n  \"samples_per_s_median\": "
    << (steps_run_ > 0 ? format_number("%g", result_.samples_per_s_median) : "null")
    // The host's part of the median step: on a GPU the rest is the wait for the device.
    << ",\n  \"issue_us_median\": "
    << (steps_run_ > 0 ? format_number("%.1f", 1e6 * issue_times_.median()) : "null")
    << ",\n  \"wall_s\": " << result_.wall_s << ",\n  \"test_accuracy\": " << result_.test_accuracy
    << ",\n  \"peak_rss_mb\": " << peak_rss_mb
    << ",\n  \"peak_device_mb\": " << memory.peak_reserved / 1048576.0
    << ",\n  \"peak_device_in_use_mb\": " << memory.peak_in_use / 1048576.0
    << ",\n  \"rank_peak_device_mb\": " << json_array(rank_peak_device_mb)
    << ",\n  \"rank_peak_device_in_use_mb\": " << json_array(rank_peak_in_use_mb)
    << ",\n  \"forced_syncs\": " << memory.forced_syncs
    << ",\n  \"graph_captures\": " << job.executor().graph_captures()  // device.cuda_graphs, rank 0
    << ",\n  \"graph_replays\": " << job.executor().graph_replays()
    << ",\n  \"overlapped_steps\": " << job.executor().overlapped_steps();  // overlap_steps
  // The strict device: the most times the host waited for the device in one step after the
  // first (rank 0).
  if (most_synchronizations_ >= 0)
    s << ",\n  \"device_synchronizations_per_step\": " << most_synchronizations_;
  s << ",\n  \"jobs\": [{\"job\": " << job.id() << ", \"peak_in_use_mb\": "
    << job.device().allocator().job_stats(job.id()).peak_in_use / 1048576.0 << "}]\n}\n";
  write_file_atomically(job.run_dir() + "/summary.json", s.str());
}

void SummaryObserver::finish(Job& job) {
  result_.steps = job.total_steps();
  result_.stopped_early = job.stopped_early();
  result_.skipped_steps = job.guard().skipped_steps();
  result_.test_accuracy = evaluation_.accuracy();
  result_.test_loss = evaluation_.loss();
  result_.wall_s = seconds_since(run_start_);
  const double median = step_times_.median();
  result_.samples_per_s_median = median > 0 ? job.samples_per_step() / median : 0;
  // Per rank, in one collective: the peak resident set, and the device's peak reserved and peak
  // in use (summary.json's top-level peaks are rank 0's; a model-parallel schedule's ranks differ).
  const size_t ranks = size_t(job.comm().size()), me = size_t(job.comm().rank());
  std::vector<double> per_rank(3 * ranks, 0.0);
  const MemoryStats memory = job.device().allocator().stats();
  per_rank[me] = peak_rss_mb();
  per_rank[ranks + me] = memory.peak_reserved / 1048576.0;
  per_rank[2 * ranks + me] = memory.peak_in_use / 1048576.0;
  job.comm().allreduce_sum(per_rank.data(), int64_t(per_rank.size()), 0);
  const std::vector<double> rss(per_rank.begin(), per_rank.begin() + long(ranks));
  if (result_.stopped_early) {
    job.log().result(
        "wavetrain: stopped at step %lld after %s with a checkpoint; exit status 75 asks for a "
        "resubmission",
        (long long)result_.steps, format_duration(result_.wall_s).c_str());
    return;
  }
  if (job.is_root())
    write_summary(job, *std::max_element(rss.begin(), rss.end()),
                  {per_rank.begin() + long(ranks), per_rank.begin() + long(2 * ranks)},
                  {per_rank.begin() + long(2 * ranks), per_rank.end()});
  const std::string final_eval =
      result_.test_accuracy < 0
          ? "no test evaluation (" +
                (job.no_evaluation_reason().empty() ? std::string("no step was run")
                                                    : job.no_evaluation_reason()) +
                ")"
          : "final test accuracy " + format_number("%.4f", result_.test_accuracy);
  if (steps_run_ == 0) {
    job.log().result(
        "wavetrain: done: no step to run, the checkpoint at step %lld already completes the %lld "
        "steps (in %s); %s",
        (long long)result_.start_step, (long long)result_.steps,
        format_duration(result_.wall_s).c_str(), final_eval.c_str());
    return;
  }
  job.log().result("wavetrain: done: %lld steps in %s, median %.0f samples/s, %s",
                   (long long)result_.steps, format_duration(result_.wall_s).c_str(),
                   result_.samples_per_s_median, final_eval.c_str());
}

}  // namespace wt
