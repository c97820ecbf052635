#pragma once
// Parameter initialisation: values drawn from the host's Rng in a fixed order, so every device
// and every rank count starts from bitwise the same weights. Layers call these from init(),
// which Model::init runs as synchronous device work.
#include <cstdint>

#include "tensor/rng.hpp"

namespace wt::ops {

void uniform_fill(Rng& rng, float lo, float hi, float* y, int64_t n);
void normal_fill(Rng& rng, float scale, float* y, int64_t n);

}  // namespace wt::ops
