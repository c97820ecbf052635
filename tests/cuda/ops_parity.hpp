#pragma once
// Every op of the ops interface run on two backends with the same random inputs, compared: the
// CUDA backend against the host's on a GPU (cuda_check.cpp), and the harness itself on the host in
// CI (tests/unit/test_ops_parity.cpp), so a GPU's rare minutes are never lost to a harness bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/ops_backend.hpp"

namespace wt::parity {

// Moves arrays between the host and the memory a backend's kernels read.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  // Waits for the backend's queued work, then copies.
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual void release(void* p) = 0;
};

// Plain host memory (the host backend's, and the harness's own test).
class HostMemory final : public Memory {
 public:
  void* allocate(size_t bytes) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  void release(void* p) override;
};

struct Outcome {
  std::string op;
  double worst = 0;  // max |got - want| / max(1, |want|)
  double tolerance = 0;
  bool passed() const { return worst <= tolerance; }
};

// Runs every op on `reference` (host memory) and on `device` (through `memory`) and compares,
// printing one line per comparison to `log` (nullptr: silent).
std::vector<Outcome> compare_backends(const OpsBackend& reference, const OpsBackend& device,
                                      Memory& memory, uint64_t seed, FILE* log);

// The GEMMs and convolutions of two backends made with Precision::Bf16 (train.precision), at
// bf16 tolerances (stated in ops_parity.cpp).
std::vector<Outcome> compare_bf16_products(const OpsBackend& reference, const OpsBackend& device,
                                           Memory& memory, uint64_t seed, FILE* log);

}  // namespace wt::parity
