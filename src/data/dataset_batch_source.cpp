#include "data/dataset_batch_source.hpp"

namespace wt {

DatasetBatchSource::DatasetBatchSource(DatasetReader& reader, const BatchSampler& sampler,
                                       int64_t global_batch, bool preload)
    : reader_(reader), sampler_(sampler), global_batch_(global_batch), preload_(preload) {
  if (preload_) thread_ = std::thread([this] { preload_loop(); });
}

DatasetBatchSource::~DatasetBatchSource() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DatasetBatchSource::quiesce() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !busy_; });
}

void DatasetBatchSource::preload_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stop_ || busy_; });
    if (stop_) return;
    const Loaded want = request_;
    lock.unlock();
    Loaded got;
    std::exception_ptr error;
    try {
      got = read(want.sequence, want.part, want.parts);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    next_ = std::move(got);
    error_ = error;
    ready_ = true;
    busy_ = false;
    changed_.notify_all();
  }
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
  l.labels.resize(rows.size() * size_t(reader_.labels_per_sample()));
  reader_.read(rows, l.inputs.data(), l.labels.data());
  return l;
}

void DatasetBatchSource::fetch(int64_t sequence, int part, int parts, Tensor& inputs,
                               std::vector<int32_t>& labels) {
  Loaded l;
  bool have = false;
  if (preload_) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !busy_; });
    if (ready_ && next_.sequence == sequence && next_.part == part && next_.parts == parts) {
      if (error_) {  // the guess was right, so its failure is this batch's failure
        ready_ = false;
        std::rethrow_exception(std::exchange(error_, nullptr));
      }
      l = std::move(next_);
      have = true;
    }
    ready_ = false;
    next_ = Loaded{};
    error_ = nullptr;
  }
  if (!have) l = read(sequence, part, parts);
  inputs = std::move(l.inputs);
  labels = std::move(l.labels);
  if (preload_) {
    std::lock_guard<std::mutex> lock(mutex_);
    request_.sequence = sequence + 1;
    request_.part = part;
    request_.parts = parts;
    busy_ = true;
    changed_.notify_all();
  }
}

}  // namespace wt
