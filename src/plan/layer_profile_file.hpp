#pragma once
// A LayerProfile cached in the run directory (profile.h5), so a resubmitted or resumed run cuts
// its stages exactly as before without profiling again.
//
//   /            attrs format="wavetrain-layer-profile", version, model, device
//   /nodes                   string[n]  node names in graph order
//   /forward_fixed_s         float64[n]
//   /forward_per_sample_s    float64[n]
//   /backward_fixed_s        float64[n]
//   /backward_per_sample_s   float64[n]
#include <string>

#include "model/graph.hpp"
#include "pricing/layer_profile.hpp"

namespace wt {

// Writes `path` atomically (a temporary file renamed into place). Throws std::runtime_error on
// I/O failure, naming the file and the system's reason ("File too large"); no temporary file is
// left behind.
void save_layer_profile(const std::string& path, const LayerProfile& profile);

// Throws InputError naming `path` and the damaged part when the file is not a readable profile.
LayerProfile load_layer_profile(const std::string& path);

// Empty when `profile` was measured on `graph` (same model name, same node names in order);
// otherwise why not, in words.
std::string profile_mismatch(const LayerProfile& profile, const Graph& graph);

// The profile.h5 at `path` (--profile), checked against the graph. Throws InputError.
LayerProfile load_checked_profile(const std::string& path, const Graph& graph);

}  // namespace wt
