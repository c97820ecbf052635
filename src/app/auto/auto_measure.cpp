#include "app/auto/auto_measure.hpp"

#include <filesystem>
#include <memory>

#include "app/run_control.hpp"
#include "app/step_observer.hpp"
#include "app/step_time_sample.hpp"
#include "app/text_format.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "job/job.hpp"

namespace wt {

namespace {

// The stop signal (SIGTERM, SIGUSR1, SIGINT) any rank got, or 0: collective, zero or not alike on
// every rank (a rank reports its own signal, else the ranks' sum, as RunControl does). The signal
// stays recorded for the training's own control point to act on.
int stop_requested(Communicator& comm) {
  double signal = stop_signal_received();
  comm.allreduce_sum(&signal, 1, 0);
  if (signal <= 0) return 0;
  return stop_signal_received() ? stop_signal_received() : int(signal);
}

// The trial's step times after its warm-up step, in the run summary's sample. A stop signal ends
// the trial after the step in hand (a scheduler's grace is short; trials can be long).
class StepTimes : public StepObserver {
 public:
  explicit StepTimes(Communicator& comm) : comm_(comm) {}
  void after_step(Job& job, const StepRecord& record) override {
    if (warmed_up_) sample_.add(record.seconds);
    warmed_up_ = true;
    if (const int signal = stop_requested(comm_)) {
      signal_ = signal;
      job.stop_after(record.step + 1);
    }
  }
  double median() const { return sample_.median(); }  // 0: no step timed
  int stop_signal() const { return signal_; }         // 0: it ran to its end

 private:
  Communicator& comm_;
  bool warmed_up_ = false;
  int signal_ = 0;
  StepTimeSample sample_{0};  // no warm-up of its own: the first step is left out above
};

// The candidate's deck as a short trial: no evaluation, checkpoints, trace or background, its
// checkpoints (none) inside its own run directory.
RunConfig trial_config(RunConfig c) {
  c.train.eval_every_epoch = false;
  c.checkpoint.every_steps = 0;
  c.checkpoint.every_seconds = 0;
  c.checkpoint.restart = "never";
  c.checkpoint.dir = "checkpoints";
  c.trace.enabled = false;
  c.background.deck.clear();
  return c;
}

// The trial's median step time (0 when it timed none); *signal: the stop signal that ended it.
double measure_one(const RunConfig& config, const std::string& trial_dir, int64_t steps,
                   Communicator& comm, DeviceContext& device, int* signal) {
  JobOptions options;
  options.run_dir = trial_dir;
  options.max_steps = steps;
  options.quiet = true;
  // A scratch directory inside the run's, removed after the trials: one a killed run left behind
  // holds nothing to keep, so it is written over rather than refused (job/earlier_run.hpp).
  options.guard_earlier_run = false;
  std::unique_ptr<Job> job;
  agree_on_failure(comm, [&] {
    job = std::make_unique<Job>(config, options, device, comm.rank(), comm.size());
  });
  job->start(comm);
  StepTimes times(comm);
  TrainingLoop loop;
  loop.add_job(*job, {&times});
  loop.run();
  *signal = times.stop_signal();
  return times.median();
}

}  // namespace

std::vector<int64_t> top_candidates(const AutoRanking& ranking, bool lossy_allowed, int n) {
  std::vector<int64_t> top;
  for (const RankedCandidate& r : ranking.rows)
    if (int(top.size()) < n && r.impossible.empty() && r.fits && (lossy_allowed || !r.lossy))
      top.push_back(r.index);
  return top;
}

std::vector<double> measure_candidates(const std::vector<AutoCandidate>& list,
                                       const std::vector<int64_t>& indices, const RunConfig& deck,
                                       const std::string& run_dir, Communicator& comm,
                                       DeviceContext& device, RunLog& log) {
  namespace fs = std::filesystem;
  const fs::path trials = fs::path(run_dir) / "auto_measure";
  std::vector<double> medians(indices.size(), 0.0);  // 0: not measured
  int signal = stop_requested(comm);                 // during the profiling that ranked them
  for (size_t k = 0; k < indices.size() && signal == 0; ++k) {
    const int64_t index = indices[k];
    const std::string dir = (trials / std::to_string(index)).string();
    agree_on_failure(comm, [&] {  // the profile measured for the ranking serves the trial too
      if (comm.rank() != 0) return;
      fs::create_directories(dir);
      const fs::path profile = fs::path(run_dir) / "profile.h5";
      if (fs::exists(profile))
        fs::copy_file(profile, fs::path(dir) / "profile.h5", fs::copy_options::overwrite_existing);
    });
    log.line("wavetrain: auto.measure: %s for %lld steps", list[size_t(index)].name.c_str(),
             (long long)deck.automatic.measure_steps + 1);
    medians[k] = measure_one(trial_config(list[size_t(index)].config), dir,
                             deck.automatic.measure_steps + 1, comm, device, &signal);
    if (medians[k] > 0)
      log.line("wavetrain: auto.measure: %s: %s per step (median)",
               list[size_t(index)].name.c_str(), human_seconds(medians[k]).c_str());
  }
  if (signal != 0)
    log.line(
        "wavetrain: auto.measure: stopped by signal %d: choosing on the measurements so far; the "
        "run stops at its first step with a checkpoint",
        signal);
  agree_on_failure(comm, [&] {
    if (comm.rank() == 0) fs::remove_all(trials);
  });
  return medians;
}

void record_measurements(AutoRanking& ranking, const std::vector<int64_t>& indices,
                         const std::vector<double>& medians) {
  for (size_t k = 0; k < indices.size(); ++k)
    for (RankedCandidate& r : ranking.rows)
      if (r.index == indices[k]) r.measured_step_s = medians[k];
}

}  // namespace wt
