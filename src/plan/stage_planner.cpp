#include "plan/stage_planner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "mem/caching_allocator.hpp"
#include "model/model.hpp"
#include "model/stage_cuts.hpp"
#include "plan/layer_profile_file.hpp"
#include "plan/layer_profiler.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

constexpr int kProfileRepeats = 5;

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// The checkpoint's cuts when they cut this graph into `stages` clean stages.
bool usable_cuts(const Graph& graph, int stages, const std::vector<int64_t>& cuts) {
  if (cuts.size() + 1 != size_t(stages)) return false;
  const std::vector<int> clean = clean_cut_points(graph);
  for (size_t i = 0; i < cuts.size(); ++i)
    if ((i > 0 && cuts[i] <= cuts[i - 1]) ||
        !std::binary_search(clean.begin(), clean.end(), int(cuts[i])))
      return false;
  return true;
}

}  // namespace

std::vector<double> node_seconds(const LayerProfile& profile, int64_t batch) {
  std::vector<double> s;
  for (size_t i = 0; i < profile.timing.size(); ++i)
    s.push_back(profile.forward_s(int(i), batch) + profile.backward_s(int(i), batch));
  return s;
}

ObtainedProfile obtain_layer_profile(const StagePlanOptions& config, const Graph& graph,
                                     const std::string& run_dir, ProfileCache cache,
                                     DeviceContext& device) {
  ObtainedProfile out;
  out.path = (std::filesystem::path(run_dir) / "profile.h5").string();
  if (!run_dir.empty() && std::filesystem::exists(out.path)) {
    try {
      LayerProfile cached = load_layer_profile(out.path);
      std::string why = profile_mismatch(cached, graph);
      for (int64_t b : config.profile_batches)
        if (why.empty() && b > 0 &&
            std::find(cached.batches.begin(), cached.batches.end(), b) == cached.batches.end())
          why = "it was not measured at " + std::to_string(b) + " samples";
      if (why.empty()) {
        out.profile = std::move(cached);
        return out;
      }
      out.warnings.push_back("the cached layer profile " + out.path + " does not fit: " + why +
                             "; profiling again");
    } catch (const InputError& e) {
      out.warnings.push_back(std::string("unusable cached layer profile: ") + e.what() +
                             "; profiling again");
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  {
    // Its own copy: profiling moves batchnorm statistics.
    Model probe(Graph::load(config.model_file), device.allocator());
    probe.init(config.seed);
    out.profile = measure_layer_profile(probe, device.kernels(), config.stage_batch,
                                        kProfileRepeats, config.profile_batches);
  }
  // The probe's activations must not count as the run's memory use.
  device.allocator().empty_cache();
  device.allocator().reset_peaks();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.measured = true;
  if (cache == ProfileCache::ReadWrite && !run_dir.empty()) {
    try {
      save_layer_profile(out.path, out.profile);
      out.saved = true;
    } catch (const std::runtime_error& e) {
      out.warnings.push_back(std::string("could not cache the layer profile: ") + e.what());
    }
  }
  return out;
}

StagePlan plan_stages(const StagePlanOptions& config, const Graph& graph, int stages,
                      const std::string& run_dir, ProfileCache cache, DeviceContext& device,
                      const std::vector<int64_t>& checkpoint_cuts) {
  StagePlan plan;
  if (!config.cuts.cuts.empty()) {
    plan.cuts = resolve_cuts(config.cuts, graph, stages);
    plan.basis = "deck";
    plan.description = "stage cut given by the deck (schedule.cuts)";
    return plan;
  }
  if (stages <= 1) {
    plan.basis = "single";
    plan.description = "one stage: no cut";
    return plan;
  }
  try {
    check_stage_count(graph, stages);
  } catch (const std::invalid_argument& e) {
    throw InputError(config.cuts.deck_path, 0, "schedule.kind",
                     "'" + config.cuts.schedule_kind + "': " + e.what());
  }
  if (!checkpoint_cuts.empty()) {
    if (usable_cuts(graph, stages, checkpoint_cuts)) {
      plan.cuts.assign(checkpoint_cuts.begin(), checkpoint_cuts.end());
      plan.basis = "checkpoint";
      plan.description = "stage cut taken from the checkpoint being resumed";
      return plan;
    }
    plan.warnings.push_back("the checkpoint's stage cuts do not fit " + std::to_string(stages) +
                            " stages of this model; balancing anew");
  }
  if (config.balance == "profile") {
    try {
      ObtainedProfile p = obtain_layer_profile(config, graph, run_dir, cache, device);
      plan.warnings = p.warnings;
      plan.node_seconds = node_seconds(p.profile, config.stage_batch);
      plan.cuts = balanced_cuts(graph, stages, plan.node_seconds);
      plan.basis = "profile";
      const std::string file = std::filesystem::path(p.path).filename().string();
      plan.description = "stage cut balanced by profiled time (" +
                         (p.measured ? std::string(p.saved ? file + ", " : "not cached, ") +
                                           "measured " + fmt_seconds(p.seconds)
                                     : file + ", cached") +
                         ", " + std::to_string(config.stage_batch) + " samples per stage pass)";
      return plan;
    } catch (const std::exception& e) {  // out of memory, say: FLOPs still give a fair cut
      plan.warnings.push_back(std::string("layer profiling failed (") + e.what() +
                              "); balancing by FLOPs");
      plan.node_seconds.clear();
    }
  }
  plan.cuts = balanced_cuts(graph, stages);
  plan.basis = "flops";
  plan.description = "stage cut balanced by FLOPs";
  return plan;
}

}  // namespace wt
