#pragma once
// The caching allocator's bookkeeping: segments (system allocations) cut into blocks, and free
// lists ("pools") of blocks by size for best fit. A free block is in one pool: the pool of the
// stream that freed it (reusable at once by that stream: stream order makes it safe; by another
// only where a captured graph's events order the free first, take_best_fit_if), or the synced pool
// (its last use is known to have finished: reusable by any stream). Taking a block splits off the
// unused tail; putting one back merges it with free neighbours of the same pool, so memory freed in
// one set of sizes serves another. Small requests (under 1 MiB) and large ones use separate
// segments (as PyTorch's allocator does): a small tensor cut from a freed large block would pin its
// whole segment, which the budget could then not get back. Blocks larger than max_split_bytes are
// never split (PyTorch's max_split_size_mb): a large cached block cut for small requests could not
// be given back whole or serve a large one again.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "mem/device_streams.hpp"

namespace wt {

constexpr int kSyncedPool = -1;
constexpr size_t kLargeBlock = size_t(1) << 20;  // requests of this size or more are "large"
// Small requests are cut from segments of this size; large segments are multiples of it.
constexpr size_t kSegmentGranule = size_t(2) << 20;
// A request over max_split_bytes may take an unsplittable cached block at most this much larger
// (PyTorch's kLargeBuffer) rather than a new segment.
constexpr size_t kOversizeWaste = size_t(20) << 20;

struct MemBlock {
  char* ptr = nullptr;
  size_t size = 0;
  MemBlock* prev = nullptr;  // address neighbours within the segment
  MemBlock* next = nullptr;
  bool allocated = false;
  bool large = false;        // cut from a segment for large requests
  int pool = kSyncedPool;    // when free: kSyncedPool or the stream whose pool holds it
  StreamEvent freed;         // when in a stream's pool: recorded on that stream at the free
  int stream = 0;            // the stream it was allocated on (and is freed on)
  int job = 0;               // the job whose memory it counts as
  bool graph = false;        // cut from a captured graph's own pool (caching_allocator_graph.cpp)
  std::vector<int> used_on;  // other streams that read it (record_use)
  std::vector<StreamEvent> pending_uses;  // once freed: events on those streams to wait for
};

class BlockPool {
 public:
  // Segments come from `device` (host memory, cudaMalloc, ...), which must outlive the pool.
  explicit BlockPool(DeviceStreams& device) : device_(device) {}
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // The smallest free block of `pool` and of `size`'s kind (small or large) with at least `size`
  // bytes, taken out and split to `size` (the tail stays free in the same pool); nullptr when
  // none fits. A block over max_split_bytes goes only to a request over it, whole.
  MemBlock* take_best_fit(int pool, size_t size);
  // The same over two pools: the smaller of their best fits (the first on a tie).
  MemBlock* take_best_fit(int pool, int other_pool, size_t size);
  // The best fit among the streams' pools (not the synced one) of the blocks `usable` accepts.
  template <class Usable>
  MemBlock* take_best_fit_if(size_t size, Usable&& usable);
  // A new segment of exactly `size` bytes from the system as one allocated block of the kind
  // `large`; nullptr when the system refuses.
  MemBlock* new_segment(size_t size, bool large);
  // Cuts allocated `block` to `size` bytes; the tail goes free into `tail_pool` (if at least a
  // sliver's worth).
  void split(MemBlock* block, size_t size, int tail_pool);
  void set_max_split_bytes(size_t bytes) { max_split_ = bytes; }
  size_t max_split_bytes() const { return max_split_; }
  // Puts a freed block into `pool`, merged with free neighbours of the same pool.
  void put(MemBlock* block, int pool);
  // Moves the blocks of every stream pool whose free event `done` says has completed (all of
  // them when `done` is null) to the synced pool. Returns how many blocks moved.
  template <class Done>
  size_t sync_pools(Done&& done);
  // Returns whole free synced segments to the system until `wanted` bytes are freed (all when
  // wanted is SIZE_MAX). Returns the bytes freed.
  size_t release_free_segments(size_t wanted);

  size_t free_bytes() const { return free_bytes_; }
  size_t largest_free_block() const;
  bool has_stream_pools() const;  // any free block not yet known to be safe for every stream

 private:
  using BySize = std::set<std::pair<size_t, MemBlock*>>;
  using PoolKey = std::pair<int, bool>;  // (pool, large)
  MemBlock* best_fit(int pool, size_t size) const;
  std::vector<MemBlock*> whole_free_segments() const;  // synced, unsplit; largest first
  void return_segment(MemBlock* block);                // one of those, to the system
  MemBlock* take(MemBlock* block, size_t size);        // out of its pool, split to `size`
  void insert(MemBlock* block, int pool);
  void erase(MemBlock* block);
  MemBlock* merge_into(MemBlock* left, MemBlock* right);
  DeviceStreams& device_;
  std::map<PoolKey, BySize> pools_;
  size_t free_bytes_ = 0;
  size_t max_split_ = SIZE_MAX;
};

template <class Usable>
MemBlock* BlockPool::take_best_fit_if(size_t size, Usable&& usable) {
  MemBlock* best = nullptr;
  const bool large = size >= kLargeBlock;
  for (auto& [key, blocks] : pools_) {
    if (key.first == kSyncedPool || key.second != large) continue;
    for (auto it = blocks.lower_bound({size, nullptr}); it != blocks.end(); ++it) {
      if (best && it->first >= best->size) break;
      MemBlock* block = it->second;
      if (block->size > max_split_ && (size <= max_split_ || block->size - size >= kOversizeWaste))
        break;  // oversize: so is every larger one (best_fit's rule)
      if (!usable(*block)) continue;
      best = block;
      break;
    }
  }
  return take(best, size);
}

template <class Done>
size_t BlockPool::sync_pools(Done&& done) {
  std::vector<MemBlock*> moving;
  for (auto& [key, blocks] : pools_) {
    if (key.first == kSyncedPool) continue;
    for (const auto& entry : blocks)
      if (done(entry.second->freed)) moving.push_back(entry.second);
  }
  for (MemBlock* block : moving) {
    erase(block);
    put(block, kSyncedPool);
  }
  return moving.size();
}

}  // namespace wt
