#include "app/auto/auto_measure.hpp"

#include <filesystem>
#include <memory>

#include "app/step_observer.hpp"
#include "app/step_time_sample.hpp"
#include "app/text_format.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "job/job.hpp"

namespace wt {

namespace {

// The trial's step times after its warm-up step, in the run summary's sample.
class StepTimes : public StepObserver {
 public:
  void after_step(Job&, const StepRecord& record) override {
    if (warmed_up_) sample_.add(record.seconds);
    warmed_up_ = true;
  }
  double median() const { return sample_.median(); }

 private:
  bool warmed_up_ = false;
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

double measure_one(const RunConfig& config, const std::string& trial_dir, int64_t steps,
                   Communicator& comm, DeviceContext& device) {
  JobOptions options;
  options.run_dir = trial_dir;
  options.max_steps = steps;
  options.quiet = true;
  std::unique_ptr<Job> job;
  agree_on_failure(comm, [&] {
    job = std::make_unique<Job>(config, options, device, comm.rank(), comm.size());
  });
  job->start(comm);
  StepTimes times;
  TrainingLoop loop;
  loop.add_job(*job, {&times});
  loop.run();
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
  std::vector<double> medians;
  for (int64_t index : indices) {
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
    medians.push_back(measure_one(trial_config(list[size_t(index)].config), dir,
                                  deck.automatic.measure_steps + 1, comm, device));
    log.line("wavetrain: auto.measure: %s: %s per step (median)", list[size_t(index)].name.c_str(),
             human_seconds(medians.back()).c_str());
  }
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
