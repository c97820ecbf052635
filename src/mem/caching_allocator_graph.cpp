// The caching allocator's memory for whole-step graphs (caching_allocator.hpp, device.cuda_graphs).
// Capturing: the step's allocations are cut from the graph's own pool, with the same stream order
// as the shared pool but no event queries (CUDA refuses them during a capture), and recorded.
// Replaying: each allocation is given the capture's address for the same place in the step, so
// the replayed kernels, which use the captured addresses, find the step's tensors there.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mem/caching_allocator.hpp"

namespace wt {

namespace {
std::string bytes_on(size_t bytes, int stream) {
  return std::to_string(bytes) + " bytes on stream " + std::to_string(stream);
}
}  // namespace

void CachingAllocator::begin_graph_capture(int graph) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // The eager steps' cache goes back to the system before the graph's own pool fills: the graph
  // holds the step's working set from now on, and both at once would double the reserved bytes.
  // Before the device's capture begins (a GPU's cudaFree has no place inside one), after the last
  // step's read-back, so the frees issued in it have run (those still queued stay cached).
  settle_pending_locked();
  pool_.sync_pools([this](const StreamEvent& e) { return events_->completed(e); });
  stats_.reserved -= pool_.release_free_segments(SIZE_MAX);
  // The other graph's blocks (a capture per pinned set) serve every stream: its step has finished.
  graph_pool_.sync_pools([this](const StreamEvent& e) { return events_->completed(e); });
  graph_index_ = graph & 1;
  graph_order().clear();
  graph_live_.clear();
  graph_follows_.clear();
  graph_event_clock_.clear();
  graph_phase_ = GraphPhase::Capturing;
  graph_thread_ = std::this_thread::get_id();
}

void CachingAllocator::begin_graph_replay(int graph) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  graph_index_ = graph & 1;
  graph_next_ = 0;
  graph_phase_ = GraphPhase::Replaying;
  graph_thread_ = std::this_thread::get_id();
}

void* CachingAllocator::graph_allocate(size_t size, int stream, size_t requested) {
  if (graph_phase_ == GraphPhase::Replaying) {
    const size_t n = graph_next_++;
    if (n >= graph_order().size() || graph_order()[n].size != size ||
        graph_order()[n].stream != stream)
      throw std::logic_error(
          "allocator: allocation " + std::to_string(n + 1) + " of a replayed step asks for " +
          bytes_on(size, stream) + " where the captured step's " +
          (n < graph_order().size()
               ? "asked for " + bytes_on(graph_order()[n].size, graph_order()[n].stream)
               : std::string("had only ") + std::to_string(n) + " allocations") +
          ": a graph replays the captured addresses, so every step must allocate the same");
    GraphBlock& block = graph_order()[n];
    if (!graph_live_.emplace(block.ptr, n).second)
      throw std::logic_error("allocator: allocation " + std::to_string(n + 1) +
                             " of a replayed step is still held from an earlier one");
    block.used_on.clear();
    stats_.in_use += size;
    stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
    jobs_[current_job()].in_use += size;
    return block.ptr;
  }
  // Capturing: the graph's own pool, in stream order (the stream's own frees and fresh memory),
  // then another stream's frees that a captured event orders before this stream's work.
  MemBlock* block = graph_pool_.take_best_fit(stream, kSyncedPool, size);
  if (!block) {
    const StreamClock& follows = graph_follows_[stream];
    block = graph_pool_.take_best_fit_if(size, [&](const MemBlock& free) {
      if (unordered_graph_reuse_) return true;
      auto known = follows.find(free.freed.stream);
      return known != follows.end() && known->second >= free.freed.sequence;
    });
  }
  if (!block) block = reserve(size, requested, graph_pool_);
  if (!block)
    throw OutOfMemory(OutOfMemory(requested, stats_.in_use, limit_).what() +
                          std::string(", while a step was captured as a CUDA graph, which holds "
                                      "its own memory (device.cuda_graphs = false runs eagerly)"),
                      requested);
  block->stream = stream;
  block->job = current_job();
  block->graph = true;
  live_[block->ptr] = block;
  count_allocation(block);
  graph_order().push_back(GraphBlock{block->ptr, size, stream, {}});
  if (device_only_) events_->name_memory(block->ptr, requested, "a tensor of a captured step");
  return block->ptr;
}

void CachingAllocator::graph_record(int event, int stream) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (graph_phase_ != GraphPhase::Capturing || !in_graph()) return;
  StreamClock clock = graph_follows_[stream];
  clock[stream] = events_->record(stream).sequence;  // the work issued on it so far
  graph_event_clock_[event] = std::move(clock);
}

void CachingAllocator::graph_wait(int stream, int event) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (graph_phase_ != GraphPhase::Capturing || !in_graph()) return;
  auto recorded = graph_event_clock_.find(event);
  if (recorded == graph_event_clock_.end()) return;  // a transfer's: nothing known (no reuse)
  StreamClock& follows = graph_follows_[stream];
  for (const auto& [other, sequence] : recorded->second)
    follows[other] = std::max(follows[other], sequence);
}

bool CachingAllocator::graph_release(void* ptr, int stream) {
  // Freed on its own stream only: free at once for that stream's later work (poisoned at the
  // free's point on the strict device), and for another stream's once a captured event orders the
  // free first, in the capture as in each replay. Used on other streams: held until the step's
  // end, when every stream has finished.
  MemBlock* captured = nullptr;
  size_t size = 0;
  bool other_streams = false;
  if (auto g = graph_live_.find(ptr); g != graph_live_.end()) {  // a replayed step's
    const GraphBlock& block = graph_order()[g->second];
    size = block.size;
    other_streams = !block.used_on.empty();
    graph_live_.erase(g);
    jobs_[current_job()].in_use -= size;
  } else {
    auto it = live_.find(ptr);
    if (it == live_.end() || !it->second->graph) return false;
    captured = it->second;
    live_.erase(it);
    size = captured->size;
    other_streams = !captured->used_on.empty();
    jobs_[captured->job].in_use -= size;
    captured->stream = stream;
  }
  stats_.in_use -= size;
  if (other_streams) {
    graph_held_.push_back(HeldGraphBlock{ptr, size, captured});
    return true;
  }
  if (poison_freed_) events_->retire(stream, ptr, size);
  // After the poisoning (strict device): another stream may take the block only once an event
  // recorded after it orders both the last use and the poisoning first (graph_record).
  if (captured) {
    captured->freed = events_->record(stream);
    graph_pool_.put(captured, stream);
  }
  return true;
}

void CachingAllocator::end_graph_step(bool device_done) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const bool replayed = graph_phase_ == GraphPhase::Replaying;
  graph_phase_ = GraphPhase::Off;
  // The step's work has finished: memory other streams used is free for the next step.
  for (const HeldGraphBlock& held : graph_held_) {
    if (poison_freed_ && device_done) {
      events_->host_write(held.ptr, held.size,
                          "the allocator poisoning a captured step's freed block");
      std::memset(held.ptr, 0xff, held.size);
    } else if (poison_freed_) {
      events_->retire(0, held.ptr, held.size);
    }
    if (held.captured) graph_pool_.put(held.captured, kSyncedPool);
  }
  graph_held_.clear();
  if (replayed && graph_next_ != graph_order().size())
    throw std::logic_error("allocator: a replayed step made " + std::to_string(graph_next_) +
                           " of the captured step's " + std::to_string(graph_order().size()) +
                           " allocations; every step must allocate the same");
  size_t held = graph_live_.size();
  for (const auto& [ptr, block] : live_)
    if (block->graph) ++held;
  if (held == 0) return;
  throw std::logic_error("allocator: " + std::to_string(held) +
                         " tensor(s) allocated in a captured step are still held after it; a "
                         "graph's memory must be free again when its step ends");
}

size_t CachingAllocator::graph_bytes() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  size_t most = 0;
  for (const auto& order : graph_orders_) {
    size_t bytes = 0;
    for (const GraphBlock& block : order) bytes += block.size;
    most = std::max(most, bytes);
  }
  return most;
}

}  // namespace wt
