#include "mem/caching_allocator.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

namespace wt {

OutOfMemory::OutOfMemory(size_t requested_bytes, size_t in_use, size_t limit)
    : std::runtime_error("out of device memory: requested " + std::to_string(requested_bytes) +
                         " bytes with " + std::to_string(in_use) + " in use of a " +
                         std::to_string(limit) + "-byte limit (device.memory_limit)"),
      requested(requested_bytes) {}

double MemoryStats::fragmentation() const {
  const size_t cached = reserved - in_use;
  return cached == 0 ? 0.0 : 1.0 - double(largest_free) / double(cached);
}

CachingAllocator::CachingAllocator(size_t limit_bytes, DeviceStreams* events)
    : limit_(limit_bytes),
      events_(events ? events : &host_events_),
      pool_(*events_),
      graph_pool_(*events_) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (MemBlock* block : pending_) pool_.put(block, kSyncedPool);
  pending_.clear();
  pool_.sync_pools([](const StreamEvent&) { return true; });
  // pool_'s destructor returns the free segments.
}

size_t CachingAllocator::round_size(size_t bytes) {
  // 512-byte granularity below 1 MiB, then quarter-power-of-two classes, so a freed block fits
  // the next request of about its size without a split, and waste stays under 25%.
  if (bytes == 0) bytes = 1;
  if (bytes < (size_t(1) << 20)) return (bytes + 511) & ~size_t(511);
  size_t pow = size_t(1) << (63 - __builtin_clzll(bytes));
  size_t step = pow / 4;
  return (bytes + step - 1) / step * step;
}

// Blocks whose other streams have finished with them join their own stream's pool.
void CachingAllocator::settle_pending_locked() {
  auto done = [this](MemBlock* block) {
    for (const StreamEvent& e : block->pending_uses)
      if (!events_->completed(e)) return false;
    return true;
  };
  auto ready = std::stable_partition(pending_.begin(), pending_.end(),
                                     [&](MemBlock* b) { return !done(b); });
  for (auto it = ready; it != pending_.end(); ++it) {
    if (poison_freed_) {  // every use is over: poison
      events_->host_write((*it)->ptr, (*it)->size, "the allocator poisoning a freed block");
      std::memset((*it)->ptr, 0xff, (*it)->size);
    }
    // `freed` is the free's own point in its stream (recorded then, not now: an event recorded
    // now would hold the block back for work issued after the free).
    pool_.put(*it, events_->completed((*it)->freed) ? kSyncedPool : (*it)->stream);
  }
  pending_.erase(ready, pending_.end());
}

size_t CachingAllocator::segment_size(size_t size) {
  // Small blocks share 2 MiB segments, so a small tensor is rarely a system allocation; large
  // segments are whole multiples of 2 MiB (PyTorch rounds those over 10 MiB alike), whose tail
  // serves the next large request of about that size.
  if (size < kLargeBlock) return kSegmentGranule;
  return (size + kSegmentGranule - 1) / kSegmentGranule * kSegmentGranule;
}

// Returns cached whole segments (those safe for every stream) until `reserved + bytes` is at
// most `cap`, or none are left.
void CachingAllocator::release_cached_for(size_t bytes, size_t cap) {
  if (stats_.reserved + bytes > cap)
    stats_.reserved -= pool_.release_free_segments(stats_.reserved + bytes - cap);
}

MemBlock* CachingAllocator::reserve(size_t size, size_t requested, BlockPool& pool) {
  // On a GPU each release is a synchronising cudaFree: cached segments go back only above the
  // release threshold or when the budget would otherwise refuse.
  // While a graph is captured nothing goes back (cudaFree is refused during a capture, from any
  // thread): the eager cache was returned when the capture began.
  const bool may_release = graph_phase_ != GraphPhase::Capturing;
  const size_t rounded = segment_size(size);
  if (release_threshold_ && may_release) release_cached_for(rounded, release_threshold_);
  // Under a budget segments are exact: rounding's tails (a 1.25 MiB block leaves 0.75 MiB that
  // no large request can use; a small segment is pinned by its last small block) would spend
  // the budget, and runs that fit their bytes in use would exit 3 (waves_memory's budget is
  // 0.8 MB over its worst rank's peak in use). The budget stays exact on reserved bytes.
  const size_t bytes = limit_ ? size : rounded;
  if (limit_ && stats_.reserved + bytes > limit_) {
    if (may_release) release_cached_for(bytes, limit_);
    if (stats_.reserved + bytes > limit_) return nullptr;
  }
  MemBlock* block = pool.new_segment(bytes, size >= kLargeBlock);
  if (!block &&
      may_release) {  // the system refuses: give it the cache back, try once more, exactly
    stats_.reserved -= pool_.release_free_segments(SIZE_MAX);
    block = pool.new_segment(size, size >= kLargeBlock);
  }
  if (!block)
    throw OutOfMemory("out of host memory: requested " + std::to_string(requested) +
                          " bytes, which this process cannot get (" +
                          std::to_string(stats_.in_use) + " in use)",
                      requested);
  stats_.reserved += block->size;
  stats_.system_allocations++;
  // Fresh memory has no earlier use: its tail is safe for every stream.
  pool.split(block, size, kSyncedPool);
  return block;
}

MemBlock* CachingAllocator::find_or_reserve(size_t size, int stream, size_t requested) {
  // The stream's own freed blocks (stream order makes them safe) and those safe for every
  // stream: the better fit of the two, so one pool's order does not cut a block the other fits.
  if (MemBlock* b = pool_.take_best_fit(stream, kSyncedPool, size)) return b;
  // Blocks read on other streams whose last use has finished, by their events: each joins its
  // own stream's pool, or the synced pool when the free's own event has completed too (then this
  // stream may take it even when it is another stream's block).
  auto other_streams = [&]() -> MemBlock* {
    settle_pending_locked();
    if (MemBlock* b = pool_.take_best_fit(stream, kSyncedPool, size)) return b;
    if (pool_.sync_pools([this](const StreamEvent& e) { return events_->completed(e); }) > 0)
      return pool_.take_best_fit(kSyncedPool, size);
    return nullptr;
  };
  // Waterwave's order (AfterSync) goes straight to fresh memory: other streams' frees wait for a
  // synchronisation, however far their streams have run.
  if (cross_stream_reuse_ == CrossStreamReuse::AfterEvents) {
    if (MemBlock* b = other_streams()) return b;
    // Before a system allocation, the device gets to run what it can (a GPU runs ahead of the
    // host): other streams' frees it reaches are then reused, as they would be on a GPU, instead
    // of a lazily run device reserving more than one would.
    if ((!pending_.empty() || pool_.has_stream_pools()) && events_->run_ahead())
      if (MemBlock* b = other_streams()) return b;
  }
  if (MemBlock* b = reserve(size, requested, pool_)) return b;
  // Memory pressure: wait for every stream, then everything freed is safe for everyone.
  if (!pending_.empty() || pool_.has_stream_pools() || !events_->idle()) {
    events_->synchronize();
    stats_.forced_syncs++;
    for (MemBlock* block : pending_) {
      if (poison_freed_) std::memset(block->ptr, 0xff, block->size);
      pool_.put(block, kSyncedPool);
    }
    pending_.clear();
    pool_.sync_pools([](const StreamEvent&) { return true; });
    if (MemBlock* b = pool_.take_best_fit(kSyncedPool, size)) return b;
    if (MemBlock* b = reserve(size, requested, pool_)) return b;
  }
  return nullptr;
}

void CachingAllocator::count_allocation(MemBlock* block) {
  stats_.in_use += block->size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  JobMemory& job = jobs_[block->job];
  job.in_use += block->size;
  job.peak_in_use = std::max(job.peak_in_use, job.in_use);
}

void CachingAllocator::set_job_limit(int job, size_t limit_bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (limit_bytes == 0)
    job_limits_.erase(job);
  else
    job_limits_[job] = limit_bytes;
}

void CachingAllocator::check_job_limit(size_t size, size_t requested) {
  const int job = current_job();
  auto limit = job_limits_.find(job);
  if (limit == job_limits_.end()) return;
  const size_t in_use = jobs_[job].in_use;
  if (in_use + size <= limit->second) return;
  throw OutOfMemory("out of device memory: requested " + std::to_string(requested) +
                        " bytes for job " + std::to_string(job) + ", which has " +
                        std::to_string(in_use) + " of its share of " +
                        std::to_string(limit->second) + " bytes in use",
                    requested);
}

void* CachingAllocator::allocate(size_t bytes, int stream, size_t* granted) {
  const size_t size = round_size(bytes);
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  stats_.allocations++;
  check_job_limit(size, bytes);
  if (in_graph()) {
    void* ptr = graph_allocate(size, stream, bytes);
    if (granted) *granted = size;
    notify_locked();
    return ptr;
  }
  MemBlock* block = find_or_reserve(size, stream, bytes);
  if (!block) throw OutOfMemory(bytes, stats_.in_use, limit_);
  block->stream = stream;
  block->job = current_job();
  live_[block->ptr] = block;
  count_allocation(block);
  if (granted) *granted = block->size;
  if (device_only_)
    events_->name_memory(block->ptr, bytes,
                         "a " + std::to_string(bytes) + "-byte tensor allocated on stream " +
                             std::to_string(stream));
  notify_locked();
  return block->ptr;
}

void CachingAllocator::release(void* ptr, int stream) {
  // Stream ordered, as a CUDA host frees (PyTorch's caching allocator): the block is free from
  // now on for later work on `stream`, which the stream runs after the work issued before the
  // free; other streams wait for the free's event, and for each stream that used it (record_use).
  // The strict device poisons it at the free's point in the stream (DeviceStreams::retire).
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (graph_release(ptr, stream)) return notify_locked();
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours: nothing to give back
  MemBlock* block = it->second;
  live_.erase(it);
  stats_.in_use -= block->size;
  jobs_[block->job].in_use -= block->size;
  block->stream = stream;
  if (block->used_on.empty()) {
    if (poison_freed_) events_->retire(stream, block->ptr, block->size);  // all bits set: NaN
    block->freed = events_->record(stream);
    pool_.put(block, stream);
  } else {
    block->freed = events_->record(stream);
    for (int other : block->used_on) block->pending_uses.push_back(events_->record(other));
    pending_.push_back(block);
  }
  notify_locked();
}

void CachingAllocator::notify_locked() {
  if (observers_.empty()) return;
  stats_.largest_free = pool_.largest_free_block();
  for (auto& [handle, observer] : observers_) observer(stats_, jobs_);
}

void CachingAllocator::record_use(void* ptr, int stream) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (auto g = graph_live_.find(ptr); g != graph_live_.end()) {
    GraphBlock& block = graph_order()[g->second];
    if (block.stream != stream &&
        std::find(block.used_on.begin(), block.used_on.end(), stream) == block.used_on.end())
      block.used_on.push_back(stream);
    return;
  }
  auto it = live_.find(ptr);
  if (it == live_.end() || it->second->stream == stream) return;
  auto& used = it->second->used_on;
  if (std::find(used.begin(), used.end(), stream) == used.end()) used.push_back(stream);
}

void CachingAllocator::sync_and_coalesce(bool synchronize_device) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (synchronize_device) events_->synchronize();
  for (MemBlock* block : pending_) pool_.put(block, kSyncedPool);
  pending_.clear();
  pool_.sync_pools([](const StreamEvent&) { return true; });
}

namespace {
thread_local int t_current_job = 0;  // which job this thread works for: like CUDA's current device
}  // namespace

CachingAllocator::JobScope::JobScope(CachingAllocator&, int job) : previous_(t_current_job) {
  t_current_job = job;
}

CachingAllocator::JobScope::~JobScope() { t_current_job = previous_; }

int CachingAllocator::current_job() { return t_current_job; }

void CachingAllocator::set_limit(size_t limit_bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  limit_ = limit_bytes;
}

void CachingAllocator::set_release_threshold(size_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  release_threshold_ = bytes;
}

void CachingAllocator::set_max_split_bytes(size_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  pool_.set_max_split_bytes(bytes == 0 ? SIZE_MAX : bytes);
}

size_t CachingAllocator::max_split_bytes() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const size_t bytes = pool_.max_split_bytes();
  return bytes == SIZE_MAX ? 0 : bytes;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  MemoryStats s = stats_;
  s.largest_free = pool_.largest_free_block();
  return s;
}

JobMemory CachingAllocator::job_stats(int job) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto it = jobs_.find(job);
  return it == jobs_.end() ? JobMemory{} : it->second;
}

void CachingAllocator::reset_peaks() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  stats_.peak_in_use = stats_.in_use;
  stats_.peak_reserved = stats_.reserved;
  for (auto& [id, job] : jobs_) job.peak_in_use = job.in_use;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // As PyTorch's emptyCache (synchronize_and_free_events): wait for the device first, so frees
  // still queued at their streams' points (the strict device's host code) take effect and their
  // segments go back too; otherwise they stay reserved and "in use", and a reset_peaks() after
  // this would start the run's peak from them.
  events_->synchronize();
  settle_pending_locked();
  pool_.sync_pools([this](const StreamEvent& e) { return events_->completed(e); });
  stats_.reserved -= pool_.release_free_segments(SIZE_MAX);
}

int CachingAllocator::add_observer(Observer observer) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  observers_[next_observer_] = std::move(observer);
  return next_observer_++;
}

void CachingAllocator::remove_observer(int handle) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  observers_.erase(handle);
}

}  // namespace wt
