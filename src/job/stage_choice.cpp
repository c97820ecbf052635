#include "job/stage_choice.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include "comm/failure_agreement.hpp"
#include "deck/component_options.hpp"
#include "io/checkpoint_file.hpp"
#include "io/checkpoint_store.hpp"
#include "model/stage_cuts.hpp"
#include "plan/stage_planner.hpp"
#include "util/input_error.hpp"

namespace wt {

CheckpointInfo resumed_checkpoint_info(const RunConfig& config, const std::string& run_dir,
                                       const ResumeRequest& resume) {
  if (!resume.wanted) return {};
  const CheckpointStore store((std::filesystem::path(run_dir) / config.checkpoint.dir).string(),
                              config.checkpoint.keep);
  const std::vector<std::string> candidates =
      resume.from.empty() ? store.candidates() : std::vector<std::string>{resume.from};
  for (const std::string& path : candidates) {
    try {
      return read_checkpoint_info(path);
    } catch (const InputError&) {
      // Damaged or locked: Checkpointer::resume skips it too and says so, or stops.
    }
  }
  return {};
}

void wait_for_root_quietly(Communicator& comm) {
  float token = 0;
  std::unique_ptr<CommRequest> done = comm.iallreduce_sum(&token, 1, 0);
  while (!done->test()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

std::vector<int> choose_stage_cuts(const RunConfig& config, const Graph& graph, int stages,
                                   const std::string& run_dir, const ResumeRequest& resume,
                                   Communicator& comm, RunLog& log, DeviceContext& device) {
  // Whatever can reject the deck is decided on every rank alike, so every rank throws the same.
  // Agreed all the same: every rank then ends with the same status, none waiting on another.
  if (!config.schedule.cuts.empty() || stages <= 1) {
    StagePlan plan;
    agree_on_failure(comm, [&] {
      plan = plan_stages(stage_plan_options(config), graph, stages, run_dir,
                         ProfileCache::ReadWrite, device);
    });
    if (stages > 1) log.line("wavetrain: %s", plan.description.c_str());
    return plan.cuts;
  }
  agree_on_failure(comm, [&] {
    try {
      check_stage_count(graph, stages);
    } catch (const std::invalid_argument& e) {
      throw deck_error(config, "schedule.kind", "'" + config.schedule.kind + "': " + e.what());
    }
  });
  std::vector<int64_t> cuts(size_t(stages - 1), 0);
  if (comm.rank() == 0) {
    const std::vector<int64_t> resumed = resumed_checkpoint_info(config, run_dir, resume).cuts;
    const StagePlan plan = plan_stages(stage_plan_options(config), graph, stages, run_dir,
                                       ProfileCache::ReadWrite, device, resumed);
    for (const std::string& w : plan.warnings) log.warning("%s", w.c_str());
    std::string cut_list;
    for (int c : plan.cuts) cut_list += (cut_list.empty() ? "" : ", ") + std::to_string(c);
    log.line("wavetrain: %s: stages start at nodes [0, %s]", plan.description.c_str(),
             cut_list.c_str());
    cuts.assign(plan.cuts.begin(), plan.cuts.end());
  }
  wait_for_root_quietly(comm);
  comm.broadcast_bytes(cuts.data(), int64_t(cuts.size() * sizeof(int64_t)), 0);
  return std::vector<int>(cuts.begin(), cuts.end());
}

}  // namespace wt
