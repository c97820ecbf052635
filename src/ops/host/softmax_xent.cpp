#include "ops/host/softmax_xent.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace wt::ops {

XentStats softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                               float* grad) {
  XentStats stats;
  for (int64_t r = 0; r < n; ++r) {
    const int32_t label = labels[r];
    if (label < 0 || label >= k)
      throw std::out_of_range("softmax_xent: label " + std::to_string(label) + " of sample " +
                              std::to_string(r) + " is outside [0, " + std::to_string(k) + ")");
    const float* __restrict x = logits + r * k;
    float* __restrict g = grad + r * k;
    int64_t argmax = 0;
    for (int64_t j = 1; j < k; ++j)
      if (x[j] > x[argmax]) argmax = j;
    const float mx = x[argmax];
    float denom = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      g[j] = std::exp(x[j] - mx);
      denom += g[j];
    }
    const float inv = 1.0f / denom;
    for (int64_t j = 0; j < k; ++j) g[j] *= inv;
    g[label] -= 1.0f;
    // -log softmax = log(sum exp(x - max)) - (x_label - max)
    stats.loss_sum += std::log(static_cast<double>(denom)) - static_cast<double>(x[label] - mx);
    stats.correct += argmax == label;
  }
  return stats;
}

}  // namespace wt::ops
