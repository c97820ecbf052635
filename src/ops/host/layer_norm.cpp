#include "ops/host/layer_norm.hpp"

#include "ops/host/host_for.hpp"
#include "ops/portable/layer_norm.hpp"

namespace wt::ops {

void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                        double eps, float* y, float* stats) {
  host_for("wt::layer_norm_forward", rows, kern::LayerNormForward{x, w, b, dim, eps, y, stats});
}

// The row kernel (dx) and the column kernel (dw, db) read the same rows; on the host the two
// passes cost about one fused pass (the rows stay in cache at the transformer's sizes).
void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                         int64_t rows, int64_t dim, float* dw, float* db, float* dx) {
  host_for_columns("wt::layer_norm_param_grads", rows, dim,
                   kern::LayerNormParamGrads{{x, dy, stats, dim}, dw, db});
  if (dx)
    host_for("wt::layer_norm_input_grad", rows, kern::LayerNormInputGrad{x, dy, w, stats, dim, dx});
}

}  // namespace wt::ops
