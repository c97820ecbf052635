#include "data/scatter_batch_source.hpp"

#include <stdexcept>
#include <string>

namespace wt {

ScatterBatchSource::ScatterBatchSource(DatasetBatchSource& whole, Communicator& comm,
                                       CachingAllocator& memory)
    : whole_(whole), comm_(comm), memory_(memory) {}

void ScatterBatchSource::fetch(const BatchRequest& request, Tensor& inputs,
                               std::vector<int32_t>& labels, int stream) {
  const int ranks = comm_.size(), me = comm_.rank();
  if (request.parts != ranks || request.part != me || request.samples > 0 || request.labels_only)
    throw std::logic_error(
        "data.distribution = \"scatter\" serves data-parallel loads only (part " +
        std::to_string(me) + " of " + std::to_string(ranks) + ")");
  const int64_t batch = global_batch();
  std::vector<float> all_inputs;
  std::vector<int32_t> all_labels;
  Shape whole_shape;
  if (me == 0) whole_.fetch_host({request.sequence, 0, 1}, all_inputs, whole_shape, all_labels);
  if (labels_per_sample_ < 0) learn_shape(whole_shape, int64_t(all_labels.size()) / batch);
  const Shape& sample = sample_shape_;
  const int64_t per_sample = shape_numel(sample), labels_per_sample = labels_per_sample_;
  std::vector<int64_t> input_bytes, label_bytes;
  for (int r = 0; r < ranks; ++r) {
    const int64_t n = batch * (r + 1) / ranks - batch * r / ranks;
    input_bytes.push_back(n * per_sample * int64_t(sizeof(float)));
    label_bytes.push_back(n * labels_per_sample * int64_t(sizeof(int32_t)));
  }
  const int64_t mine = batch * (me + 1) / ranks - batch * me / ranks;
  std::vector<float> part(static_cast<size_t>(mine * per_sample));
  labels.resize(static_cast<size_t>(mine * labels_per_sample));
  comm_.scatter_bytes(all_inputs.data(), input_bytes, part.data(), 0);
  comm_.scatter_bytes(all_labels.data(), label_bytes, labels.data(), 0);
  Shape shape{mine};
  shape.insert(shape.end(), sample.begin(), sample.end());
  inputs = Tensor::empty(shape, memory_, stream);
  inputs.set_label("a scattered batch");
  inputs.copy_from_host_async(std::move(part), stream);
}

// Every batch has the first one's shape: rank 0 sends [sample dims..., labels per sample, dims
// count] once.
void ScatterBatchSource::learn_shape(const Shape& whole, int64_t labels_per_sample) {
  std::vector<int64_t> header(8, 0);
  if (comm_.rank() == 0) {
    if (whole.size() > 7)
      throw std::logic_error("data.distribution = \"scatter\": samples of more than 6 dimensions");
    header[7] = int64_t(whole.size()) - 1;
    for (size_t d = 1; d < whole.size(); ++d) header[d - 1] = whole[d];
    header[6] = labels_per_sample;
  }
  comm_.broadcast_bytes(header.data(), int64_t(header.size() * sizeof(int64_t)), 0);
  sample_shape_.assign(header.begin(), header.begin() + header[7]);
  labels_per_sample_ = header[6];
}

void ScatterBatchSource::plan(const std::vector<BatchRequest>& next) {
  if (comm_.rank() != 0) return;  // only rank 0 reads
  std::vector<BatchRequest> whole;
  for (const BatchRequest& r : next) whole.push_back({r.sequence, 0, 1});
  whole_.plan(whole);
}

}  // namespace wt
