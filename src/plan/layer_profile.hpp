#pragma once
// Measured per-layer compute times (Wavelet's profiling step): what stage balancing and the
// simulator use instead of FLOP estimates when a profile exists. Each layer's forward and backward
// time is a line in the batch size, fitted from two measured batch sizes, so a microbatch of 8
// and a batch of 64 are both priced well.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct LayerTiming {
  double forward_fixed_s = 0;  // per call, whatever the batch size (launch, setup)
  double forward_per_sample_s = 0;
  double backward_fixed_s = 0;
  double backward_per_sample_s = 0;
};

struct LayerProfile {
  std::string model;                // Graph::name it was measured on
  std::string device;               // where, in words ("cpu: AMD EPYC, 1 thread")
  std::vector<std::string> nodes;   // node names in graph order
  std::vector<LayerTiming> timing;  // one per node

  double forward_s(int node, int64_t samples) const {
    const LayerTiming& t = timing[node];
    return t.forward_fixed_s + t.forward_per_sample_s * static_cast<double>(samples);
  }
  double backward_s(int node, int64_t samples) const {
    const LayerTiming& t = timing[node];
    return t.backward_fixed_s + t.backward_per_sample_s * static_cast<double>(samples);
  }
};

}  // namespace wt
