#pragma once
// Deterministic in-memory batches for schedule equivalence tests: global batch `sequence` is the
// same B samples however many parts it is cut into, and a rank asking for part p gets rows
// [p*B/P, (p+1)*B/P) of it — exactly the contract of the HDF5-backed source.
#include "data/batch_source.hpp"
#include "tensor/rng.hpp"
#include "test_memory.hpp"

namespace wt::testing {

class SyntheticSource : public BatchSource {
 public:
  // The batches come from `memory` (the device the executor runs on).
  SyntheticSource(Shape sample_shape, int classes, int64_t global_batch, uint64_t seed,
                  CachingAllocator& memory = wt::testing::memory())
      : shape_(std::move(sample_shape)),
        classes_(classes),
        batch_(global_batch),
        seed_(seed),
        memory_(memory) {}
  int64_t global_batch() const override { return batch_; }
  void fetch(const BatchRequest& request, Tensor& inputs, std::vector<int32_t>& labels,
             int stream = 1) override {
    const int64_t sequence = request.sequence;
    const int part = request.part, parts = request.parts;
    const auto [begin, end] = request_positions(request, batch_);
    const int64_t per_sample = shape_numel(shape_);
    Shape s{end - begin};
    s.insert(s.end(), shape_.begin(), shape_.end());
    inputs = Tensor::empty(s, memory_, stream);
    labels.resize(end - begin);
    std::vector<float> values(size_t((end - begin) * per_sample));
    for (int64_t i = begin; i < end; ++i) {
      Rng r(seed_ * 7919 + uint64_t(sequence) * 104729 + uint64_t(i));
      labels[i - begin] = int32_t(r.below(classes_));
      for (int64_t k = 0; k < per_sample; ++k) values[(i - begin) * per_sample + k] = r.normal();
    }
    inputs.copy_from_host_async(std::move(values), stream);
    requests.push_back({sequence, part, parts});
    if (request.labels_only) inputs = Tensor();  // as the contract says: labels alone
  }
  struct Request {
    int64_t sequence;
    int part, parts;
  };
  std::vector<Request> requests;

 private:
  Shape shape_;
  int classes_;
  int64_t batch_;
  uint64_t seed_;
  CachingAllocator& memory_;
};

}  // namespace wt::testing
