#include "data/dataset_batch_source.hpp"

namespace wt {

DatasetBatchSource::DatasetBatchSource(DatasetReader& reader, const BatchSampler& sampler,
                                       int64_t global_batch, bool preload)
    : reader_(reader), sampler_(sampler), global_batch_(global_batch), preload_(preload) {}

DatasetBatchSource::~DatasetBatchSource() { quiesce(); }

void DatasetBatchSource::quiesce() {
  if (next_.valid()) next_.wait();
}

DatasetBatchSource::Loaded DatasetBatchSource::read(int64_t sequence, int part, int parts) {
  const int64_t per_epoch = sampler_.batches_per_epoch();
  std::vector<int64_t> rows =
      sampler_.rows(sequence / per_epoch, sequence % per_epoch, part, parts);
  Loaded l;
  l.sequence = sequence;
  l.part = part;
  l.parts = parts;
  Shape shape{static_cast<int64_t>(rows.size())};
  for (int64_t d : reader_.sample_shape()) shape.push_back(d);
  // Stream 1: data buffers come from their own pool, apart from compute temporaries.
  l.inputs = Tensor::empty(shape, 1);
  l.labels.resize(rows.size());
  reader_.read(rows, l.inputs.data(), l.labels.data());
  return l;
}

void DatasetBatchSource::fetch(int64_t sequence, int part, int parts, Tensor& inputs,
                               std::vector<int32_t>& labels) {
  Loaded l;
  if (next_.valid() && next_sequence_ == sequence && next_part_ == part && next_parts_ == parts) {
    l = next_.get();
  } else {
    quiesce();
    if (next_.valid()) next_.get();
    l = read(sequence, part, parts);
  }
  inputs = std::move(l.inputs);
  labels = std::move(l.labels);
  if (preload_) {
    next_sequence_ = sequence + 1;
    next_part_ = part;
    next_parts_ = parts;
    next_ = std::async(std::launch::async,
                       [this, sequence, part, parts] { return read(sequence + 1, part, parts); });
  }
}

}  // namespace wt
