#pragma once
// The ops-parity harness (ops_parity.cpp's comparisons): arrays held on both sides, each op run on
// the reference and on the device backend, outputs compared within a tolerance or bitwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops_parity.hpp"
#include "tensor/rng.hpp"

namespace wt::parity {

// One array on both sides: `host` for the reference backend, `dev` in the device's memory.
template <class T>
struct Both {
  std::vector<T> host;
  std::shared_ptr<T> dev;
  T* d() const { return dev.get(); }
  T* h() { return host.data(); }
};

class Harness {
 public:
  Harness(const OpsBackend& ref, const OpsBackend& dev, Memory& memory, uint64_t seed, FILE* log)
      : ref_(ref), dev_(dev), memory_(memory), rng_(seed), log_(log) {}

  template <class T>
  Both<T> copy_of(std::vector<T> values) {
    Both<T> b{std::move(values), nullptr};
    const size_t bytes = b.host.size() * sizeof(T);
    T* p = static_cast<T*>(memory_.allocate(bytes));
    memory_.upload(p, b.host.data(), bytes);
    Memory* memory = &memory_;
    b.dev = std::shared_ptr<T>(p, [memory](T* q) { memory->release(q); });
    return b;
  }
  std::vector<float> values(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = rng_.uniform(lo, hi);
    return v;
  }
  Both<float> random(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    return copy_of(values(n, lo, hi));
  }
  Both<float> filled(int64_t n, float value) {
    return copy_of(std::vector<float>(size_t(n), value));
  }
  Rng& rng() { return rng_; }

  // Runs `op` on both sides: op(backend, side) with side 0 the reference, 1 the device.
  void run(const std::function<void(const OpsBackend&, bool device)>& op) {
    op(ref_, false);
    op(dev_, true);
  }

  template <class T>
  void expect(const std::string& name, Both<T>& b, double tolerance) {
    std::vector<T> got(b.host.size());
    memory_.download(got.data(), b.d(), got.size() * sizeof(T));
    Outcome o{name, 0, tolerance};
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = double(b.host[i]), diff = std::fabs(double(got[i]) - want);
      const double rel = std::isnan(diff)
                             ? (std::isnan(double(got[i])) && std::isnan(want) ? 0 : 1e30)
                             : diff / std::max(1.0, std::fabs(want));
      o.worst = std::max(o.worst, rel);
    }
    if (log_)
      std::fprintf(log_, "%-40s max relative difference %.3g (tolerance %.0e) %s\n", name.c_str(),
                   o.worst, tolerance, o.passed() ? "ok" : "FAIL");
    outcomes_.push_back(o);
  }

  // Runs `op` on the device side only (the repeat checks).
  void run_device(const std::function<void(const OpsBackend&)>& op) { op(dev_); }

  // Two device results of the same op on the same inputs must be bitwise equal: the GPU's sums
  // join in fixed trees, never in the order blocks happen to finish.
  template <class T>
  void expect_bitwise_same(const std::string& name, Both<T>& first, Both<T>& second,
                           const std::string& claim = "run twice") {
    std::vector<T> a(first.host.size()), b(second.host.size());
    memory_.download(a.data(), first.d(), a.size() * sizeof(T));
    memory_.download(b.data(), second.d(), b.size() * sizeof(T));
    const bool same =
        a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
    if (log_)
      std::fprintf(log_, "%-40s %s\n", (name + " " + claim + ": bitwise equal").c_str(),
                   same ? "ok" : "FAIL");
    outcomes_.push_back(Outcome{name + " " + claim, same ? 0.0 : 1e30, 0});
  }

  // The host side's current values into the device copy.
  template <class T>
  void upload(Both<T>& b) {
    memory_.upload(b.d(), b.host.data(), b.host.size() * sizeof(T));
  }
  void fail(const std::string& what) {
    if (log_) std::fprintf(log_, "%s FAIL\n", what.c_str());
    outcomes_.push_back(Outcome{what, 1e30, 0});
  }

  std::vector<Outcome> outcomes() const { return outcomes_; }

 private:
  const OpsBackend& ref_;
  const OpsBackend& dev_;
  Memory& memory_;
  Rng rng_;
  FILE* log_;
  std::vector<Outcome> outcomes_;
};

#define SIDE(b) (device ? (b).d() : (b).h())

// Tolerances: 1e-6 where both sides do the same float operations in the same order (FMA
// contraction aside), 1e-4 for GEMM-based ops (cuBLAS and cuDNN order sums their own way).
constexpr double kSame = 1e-6, kSummed = 1e-4;

}  // namespace wt::parity
