#pragma once
// Where LoadBatch instructions get their data: part `part` of `parts` of global batch number
// `sequence`, counted from the start of training. Stateless by sequence number, so any schedule
// can ask for any batch, and a restart only needs the sequence number.
#include <cstdint>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t global_batch() const = 0;
  // inputs: [n, sample shape...] float; labels: n * labels per sample entries.
  virtual void fetch(int64_t sequence, int part, int parts, Tensor& inputs,
                     std::vector<int32_t>& labels) = 0;
};

}  // namespace wt
