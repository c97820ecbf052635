#include "mem/block_pool.hpp"

#include <algorithm>
#include <cstdlib>

namespace wt {

namespace {

// A tail smaller than this stays with the block: splitting it off would only make slivers.
constexpr size_t kMinSplit = 512;

}  // namespace

BlockPool::~BlockPool() {
  // Segments whose blocks are all free go back to the system; one still in use is left to the
  // process's exit (a tensor outlived its allocator), as are all of them where the device refuses
  // the release (a destructor must not throw). No device work is run for it: at teardown, work
  // still queued belongs to objects that may be gone.
  try {
    for (MemBlock* block : whole_free_segments()) return_segment(block);
  } catch (...) {
  }
  for (auto& [key, blocks] : pools_)
    for (const auto& entry : blocks) delete entry.second;
}

void BlockPool::insert(MemBlock* block, int pool) {
  block->pool = pool;
  pools_[{pool, block->large}].emplace(block->size, block);
  free_bytes_ += block->size;
}

void BlockPool::erase(MemBlock* block) {
  pools_[{block->pool, block->large}].erase({block->size, block});
  free_bytes_ -= block->size;
}

MemBlock* BlockPool::best_fit(int pool, size_t size) const {
  auto found = pools_.find({pool, size >= kLargeBlock});
  if (found == pools_.end()) return nullptr;
  auto it = found->second.lower_bound({size, nullptr});
  if (it == found->second.end()) return nullptr;
  MemBlock* block = it->second;
  // The smallest fit is oversize: every other fit is too. A small request leaves it whole for a
  // large one; a large request takes it unsplit unless that wastes too much.
  const bool oversize = block->size > max_split_;
  if (oversize && (size <= max_split_ || block->size - size >= kOversizeWaste)) return nullptr;
  return block;
}

MemBlock* BlockPool::take_best_fit(int pool, size_t size) {
  return take(best_fit(pool, size), size);
}

MemBlock* BlockPool::take_best_fit(int pool, int other_pool, size_t size) {
  MemBlock* a = best_fit(pool, size);
  MemBlock* b = best_fit(other_pool, size);
  return take(a && (!b || a->size <= b->size) ? a : b, size);
}

MemBlock* BlockPool::take(MemBlock* block, size_t size) {
  if (!block) return nullptr;
  const bool oversize = block->size > max_split_;
  erase(block);
  block->allocated = true;
  if (!oversize) split(block, size, block->pool);
  return block;
}

void BlockPool::split(MemBlock* block, size_t size, int tail_pool) {
  if (block->size - size < kMinSplit) return;
  auto* tail = new MemBlock;
  tail->ptr = block->ptr + size;
  tail->size = block->size - size;
  tail->large = block->large;
  tail->prev = block;
  tail->next = block->next;
  tail->freed = block->freed;
  if (block->next) block->next->prev = tail;
  block->next = tail;
  block->size = size;
  insert(tail, tail_pool);
}

MemBlock* BlockPool::new_segment(size_t size, bool large) {
  void* memory = device_.allocate_segment(size);
  if (!memory) return nullptr;
  auto* block = new MemBlock;
  block->ptr = static_cast<char*>(memory);
  block->size = size;
  block->large = large;
  block->allocated = true;
  return block;
}

MemBlock* BlockPool::merge_into(MemBlock* left, MemBlock* right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next) right->next->prev = left;
  // The merged block may be reused once both halves' last uses have finished: on one stream,
  // the later of the two events covers both.
  if (right->freed.sequence > left->freed.sequence) left->freed = right->freed;
  delete right;
  return left;
}

void BlockPool::put(MemBlock* block, int pool) {
  block->allocated = false;
  block->used_on.clear();
  block->pending_uses.clear();
  auto mergeable = [pool](const MemBlock* b) { return b && !b->allocated && b->pool == pool; };
  if (mergeable(block->prev)) {
    MemBlock* left = block->prev;
    erase(left);
    block = merge_into(left, block);
  }
  if (mergeable(block->next)) {
    MemBlock* right = block->next;
    erase(right);
    block = merge_into(block, right);
  }
  insert(block, pool);
}

std::vector<MemBlock*> BlockPool::whole_free_segments() const {
  std::vector<MemBlock*> whole;
  for (bool large : {true, false}) {  // largest first
    auto found = pools_.find({kSyncedPool, large});
    if (found == pools_.end()) continue;
    for (auto it = found->second.rbegin(); it != found->second.rend(); ++it)
      if (!it->second->prev && !it->second->next) whole.push_back(it->second);
  }
  return whole;
}

size_t BlockPool::release_free_segments(size_t wanted) {
  if (whole_free_segments().empty()) return 0;
  // cudaFree waits for the device: on the strict device, its queued work runs now, and may free
  // more, so the list is made after it (and a refusal, during a capture, leaves the pool as it
  // was).
  device_.before_segment_release();
  size_t released = 0;
  for (MemBlock* block : whole_free_segments()) {
    if (released >= wanted) break;
    released += block->size;
    return_segment(block);
  }
  return released;
}

void BlockPool::return_segment(MemBlock* block) {
  device_.free_segment(block->ptr, block->size);  // first: a refusal leaves the pool as it was
  erase(block);
  delete block;
}

size_t BlockPool::largest_free_block() const {
  size_t largest = 0;
  for (const auto& [key, blocks] : pools_)
    if (!blocks.empty()) largest = std::max(largest, blocks.rbegin()->first);
  return largest;
}

bool BlockPool::has_stream_pools() const {
  for (const auto& [key, blocks] : pools_)
    if (key.first != kSyncedPool && !blocks.empty()) return true;
  return false;
}

}  // namespace wt
