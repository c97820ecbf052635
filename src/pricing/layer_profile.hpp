#pragma once
// Measured per-layer compute times (Wavelet's profiling step): what stage balancing and the
// simulator use instead of FLOP estimates when a profile exists. Each layer's forward and backward
// time is a line in the batch size, fitted from two measured batch sizes, so a microbatch of 8
// and a batch of 64 are both priced well. Where the times were also measured at more batch sizes
// (the burst planner asks for every per-rank batch it may choose: DeepPool profiles each), a time
// between two measured sizes is interpolated between them instead: a GPU's time is far from a
// line at small batches.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct LayerTiming {
  double forward_fixed_s = 0;  // per call, whatever the batch size (launch, setup)
  double forward_per_sample_s = 0;
  double backward_fixed_s = 0;
  double backward_per_sample_s = 0;
  std::vector<double> forward_at = {};  // at LayerProfile::batches, when measured there
  std::vector<double> backward_at = {};
};

// `values` measured at `batches` (ascending), read piecewise-linearly at `samples`; `line` outside
// the measured range or when there are fewer than two points.
inline double interpolate_measured(const std::vector<int64_t>& batches,
                                   const std::vector<double>& values, int64_t samples,
                                   double line) {
  if (batches.size() < 2 || values.size() != batches.size() || samples < batches.front() ||
      samples > batches.back())
    return line;
  size_t k = 1;
  while (batches[k] < samples) ++k;
  const double a = double(batches[k - 1]), b = double(batches[k]);
  const double w = (double(samples) - a) / (b - a);
  return values[k - 1] * (1 - w) + values[k] * w;
}

struct LayerProfile {
  std::string model;                // Graph::name it was measured on
  std::string device;               // where, in words ("cpu: AMD EPYC, 1 thread")
  std::vector<std::string> nodes;   // node names in graph order
  std::vector<LayerTiming> timing;  // one per node
  std::vector<int64_t> batches;     // batch sizes every node was measured at (ascending), or none

  double forward_s(int node, int64_t samples) const {
    const LayerTiming& t = timing[node];
    return interpolate_measured(
        batches, t.forward_at, samples,
        t.forward_fixed_s + t.forward_per_sample_s * static_cast<double>(samples));
  }
  double backward_s(int node, int64_t samples) const {
    const LayerTiming& t = timing[node];
    return interpolate_measured(
        batches, t.backward_at, samples,
        t.backward_fixed_s + t.backward_per_sample_s * static_cast<double>(samples));
  }
};

}  // namespace wt
