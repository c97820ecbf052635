#include "ops/host/attention.hpp"

#include "ops/host/host_for.hpp"
#include "ops/portable/attention.hpp"

namespace wt::ops {

void causal_softmax(float* p, int64_t T, int64_t count) {
  host_for("wt::causal_softmax", T * count, kern::CausalSoftmax{p, T});
}

void causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) {
  host_for("wt::causal_softmax_backward", T * count, kern::CausalSoftmaxBackward{p, g, T});
}

}  // namespace wt::ops
