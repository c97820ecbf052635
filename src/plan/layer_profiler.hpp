#pragma once
// Wavelet's profiling step: run every layer of a model forward and backward on this rank with a
// synthetic batch and time each call, so stage cuts (and the simulator) can use measured times
// instead of FLOP estimates. A real batch flows through the whole graph, so every layer sees
// inputs of its real shapes (token ids for embeddings, valid labels for the loss).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "pricing/layer_profile.hpp"

namespace wt {

// Times `model`'s layers at `batch` samples and at max(1, batch / 4) (both after a warm-up pass),
// the fastest of `repeats` passes each, and fits each layer's forward and backward time as
// fixed + per-sample seconds (negative parts clamped to 0). The model's parameters are not
// changed (batchnorm running statistics are: profile a model of its own); its gradient buffers
// are zeroed afterwards. Throws OutOfMemory when the device budget
// cannot hold the whole model's activations at `batch`.
// also_at: more batch sizes to measure every layer at (LayerProfile::batches; the two above are
// among them), for profiles read at many per-rank batches (the burst planner).
LayerProfile measure_layer_profile(Model& model, const OpsBackend& ops, int64_t batch,
                                   int repeats = 5, std::vector<int64_t> also_at = {});

// "cpu: <processor name>, 1 thread": where this process measures, in words.
std::string profiling_device_name();

}  // namespace wt
