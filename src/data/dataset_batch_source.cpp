#include "data/dataset_batch_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mem/caching_allocator.hpp"

namespace wt {

DatasetBatchSource::DatasetBatchSource(DatasetReader& reader, CachingAllocator& memory,
                                       const BatchSampler& sampler, int64_t global_batch,
                                       bool preload)
    : reader_(reader),
      memory_(memory),
      job_(CachingAllocator::current_job()),
      sampler_(sampler),
      global_batch_(global_batch),
      preload_(preload) {
  if (memory_.device_only()) staging_ = std::make_unique<PinnedStaging>(memory_.device());
  if (preload_) thread_ = std::thread([this] { preload_loop(); });
}

void DatasetBatchSource::dequantize_on(DeviceContext& device) {
  if (!memory_.device_only() || !reader_.has_u8_table() || reader_.inputs_are_float()) return;
  quiesce();  // batches read ahead so far hold floats; later ones will not
  const std::vector<float>& table = reader_.u8_table();
  u8_table_ = Tensor::empty({int64_t(table.size())}, memory_);
  u8_table_.set_label("the dataset's uint8 lookup table");
  u8_table_.copy_from_host(table.data());
  std::lock_guard<std::mutex> lock(mutex_);
  device_ = &device;
}

DatasetBatchSource::~DatasetBatchSource() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  for (Loaded& l : ready_) drop(l);
  for (auto& set : fixed_)
    for (PinnedStaging::Buffer& b : set) staging_->release(b);
}

void DatasetBatchSource::set_graph_staging(bool on) {
  if (on && !staging_)
    throw std::logic_error("graph staging needs a device that host code cannot write");
  graph_staging_ = on;
  fixed_next_ = 0;
}

void DatasetBatchSource::into_fixed_buffer(Loaded& l) {
  // The copies from this set's buffers, issued two steps ago, have run: the executor reads a
  // step's results back (a synchronisation) before it issues the step after next, so the host
  // may rewrite them now, with no event to ask.
  const size_t bytes = size_t(shape_numel(l.shape)) * (l.raw_u8 ? 1 : sizeof(float));
  // Both sets grow together: the eager first step's, outside any capture (cudaMallocHost).
  for (auto& each : fixed_)
    if (fixed_next_ == each.size()) each.push_back(staging_->acquire(bytes));
  PinnedStaging::Buffer& fixed = fixed_[fixed_set_][fixed_next_++];
  if (fixed.bytes < bytes) {  // a bigger batch than before: a new address (a new capture)
    staging_->release(fixed);
    fixed = staging_->acquire(bytes);
  }
  std::memcpy(fixed.ptr, l.pinned.ptr, bytes);
  staging_->release(l.pinned);
  l.pinned = fixed;
}

void DatasetBatchSource::drop(Loaded& l) {
  if (l.pinned.ptr) staging_->release(l.pinned);
  l.pinned = PinnedStaging::Buffer();
}

void DatasetBatchSource::quiesce() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !reading_ && planned_.empty(); });
}

bool DatasetBatchSource::pending(const BatchRequest& request) const {
  return (reading_ && current_ == request) ||
         std::find(planned_.begin(), planned_.end(), request) != planned_.end();
}

void DatasetBatchSource::plan(const std::vector<BatchRequest>& next) {
  fixed_next_ = 0;  // the executor plans after its step's last load: the next fetch is the first
  if (!preload_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  planned_.assign(next.begin(), next.end());
  // Batches read for an earlier plan and never fetched are not coming back: free them.
  const auto unplanned = std::stable_partition(ready_.begin(), ready_.end(), [&](const Loaded& l) {
    return std::find(next.begin(), next.end(), l.request) != next.end();
  });
  for (auto it = unplanned; it != ready_.end(); ++it) drop(*it);
  ready_.erase(unplanned, ready_.end());
  changed_.notify_all();
}

void DatasetBatchSource::preload_loop() {
  CachingAllocator::JobScope account(memory_, job_);  // batches count as the owning job's
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stop_ || !planned_.empty(); });
    if (stop_) return;
    current_ = planned_.front();
    planned_.pop_front();
    reading_ = true;
    lock.unlock();
    Loaded got;
    try {
      got = read(current_);
    } catch (...) {
      got.request = current_;
      got.error = std::current_exception();
    }
    lock.lock();
    ready_.push_back(std::move(got));
    reading_ = false;
    changed_.notify_all();
  }
}

DatasetBatchSource::Loaded DatasetBatchSource::read(const BatchRequest& request) {
  const int64_t per_epoch = sampler_.batches_per_epoch();
  std::vector<int64_t> rows;
  if (request.samples > 0) {  // a run of positions: read those alone
    const std::vector<int64_t> all =
        sampler_.rows(request.sequence / per_epoch, request.sequence % per_epoch, 0, 1);
    const auto [first, end] = request_positions(request, int64_t(all.size()));
    if (first < 0 || end > int64_t(all.size()))
      throw std::logic_error("batch positions beyond the global batch");
    rows.assign(all.begin() + first, all.begin() + end);
  } else {
    rows = sampler_.rows(request.sequence / per_epoch, request.sequence % per_epoch, request.part,
                         request.parts);
  }
  Loaded l;
  l.request = request;
  l.labels.resize(rows.size() * size_t(reader_.labels_per_sample()));
  if (request.labels_only) {
    reader_.read(rows, nullptr, l.labels.data());
    return l;
  }
  l.shape = {static_cast<int64_t>(rows.size())};
  for (int64_t d : reader_.sample_shape()) l.shape.push_back(d);
  if (staging_) {
    bool raw = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      raw = device_ != nullptr;
    }
    const size_t numel = size_t(shape_numel(l.shape));
    l.pinned = staging_->acquire(raw ? numel : numel * sizeof(float));
    l.raw_u8 = raw;
    try {
      if (raw)
        reader_.read_raw(rows, static_cast<uint8_t*>(l.pinned.ptr), l.labels.data());
      else
        reader_.read(rows, static_cast<float*>(l.pinned.ptr), l.labels.data());
    } catch (...) {
      drop(l);
      throw;
    }
    return l;
  }
  l.inputs = allocate_inputs(l.shape);
  reader_.read(rows, l.inputs.data(), l.labels.data());
  return l;
}

Tensor DatasetBatchSource::allocate_inputs(const Shape& shape, int stream) {
  // Read ahead on the host device: stream 1, data buffers' own pool, apart from compute
  // temporaries. Staged: the stream that copies them in and reads them.
  try {
    Tensor inputs = Tensor::empty(shape, memory_, stream);
    inputs.set_label("a batch of " + reader_.split() + " inputs");
    return inputs;
  } catch (const OutOfMemory& e) {
    throw OutOfMemory("cannot allocate a batch of " + std::to_string(shape[0]) + " samples of " +
                          reader_.path() + " /" + reader_.split() + "/inputs: " + e.what(),
                      e.requested);
  }
}

DatasetBatchSource::Loaded DatasetBatchSource::take(const BatchRequest& request) {
  Loaded l;
  bool hit = false;
  if (preload_) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !pending(request); });
    auto found = std::find_if(ready_.begin(), ready_.end(),
                              [&](const Loaded& r) { return r.request == request; });
    if (found != ready_.end()) {
      l = std::move(*found);
      ready_.erase(found);
      hit = true;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++(hit ? stats_.hits : stats_.misses);
  }
  if (l.error) std::rethrow_exception(l.error);  // a planned read failed: this batch's failure
  if (!hit) l = read(request);
  return l;
}

void DatasetBatchSource::fetch(const BatchRequest& request, Tensor& inputs,
                               std::vector<int32_t>& labels, int stream) {
  // Buffers whose copies have run take the next batches (not while a graph is captured: no event
  // queries then; the graph's copies read fixed buffers, and the others wait for a later fetch).
  if (staging_ && !graph_staging_) staging_->reclaim();
  Loaded l = take(request);
  if (l.pinned.ptr && graph_staging_) into_fixed_buffer(l);
  if (l.pinned.ptr) copy_in(l, stream);
  inputs = std::move(l.inputs);
  labels = std::move(l.labels);
}

void DatasetBatchSource::copy_in(Loaded& l, int stream) {
  DeviceStreams& device = memory_.device();
  const int64_t numel = shape_numel(l.shape);
  try {
    l.inputs = allocate_inputs(l.shape, stream);
    if (!l.raw_u8) {
      device.copy_from_pinned_async(stream, l.inputs.device_ptr(), l.pinned.ptr, l.inputs.bytes(),
                                    "a batch of inputs");
    } else {
      Tensor raw = Tensor::empty({(numel + 3) / 4}, memory_, stream);
      raw.set_label("a batch of raw uint8 inputs");
      device.copy_from_pinned_async(stream, raw.device_ptr(), l.pinned.ptr, size_t(numel),
                                    "a batch of raw uint8 inputs");
      device_->ops(stream).dequantize_u8(reinterpret_cast<const uint8_t*>(raw.device_ptr()), numel,
                                         reader_.sample_numel(), reader_.u8_group(),
                                         u8_table_.device_ptr(), l.inputs.device_ptr());
    }  // raw goes back to the pool after the kernel, in stream order
  } catch (...) {
    drop(l);
    throw;
  }
  if (!graph_staging_) staging_->release_after_copy(l.pinned, stream);  // fixed ones stay
  l.pinned = PinnedStaging::Buffer();
}

void DatasetBatchSource::fetch_host(const BatchRequest& request, std::vector<float>& inputs,
                                    Shape& shape, std::vector<int32_t>& labels) {
  Loaded l = take(request);
  if (l.pinned.ptr) {  // the rows in host memory already
    const int64_t numel = shape_numel(l.shape);
    inputs.resize(size_t(numel));
    if (l.raw_u8)
      reader_.dequantize(static_cast<const uint8_t*>(l.pinned.ptr), l.shape[0], inputs.data());
    else
      std::memcpy(inputs.data(), l.pinned.ptr, size_t(numel) * sizeof(float));
    drop(l);
  } else {  // the host device: a tensor the host addresses (or labels only: nothing)
    inputs = l.inputs.defined() ? l.inputs.to_host() : std::vector<float>();
  }
  shape = l.shape;
  labels = std::move(l.labels);
}

PreloadStats DatasetBatchSource::preload_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace wt
