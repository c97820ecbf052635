#pragma once
// The step times a run's median rate is taken from, in bounded memory whatever the step count:
// every step is kept until the sample is full, then every second one, then every fourth..., so
// the sample always spans the whole run evenly (a run of 10^12 steps holds at most kCapacity).
// The first steps, which warm caches and the allocator, are left out, as before: min(10, 10%).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace wt {

class StepTimeSample {
 public:
  static constexpr size_t kCapacity = 1 << 16;

  explicit StepTimeSample(int64_t total_steps)
      : warmup_(std::min<int64_t>(10, std::max<int64_t>(total_steps, 0) / 10)) {}

  void add(double seconds) {
    if (seen_++ < warmup_) return;
    if ((seen_ - warmup_ - 1) % stride_ != 0) return;
    kept_.push_back(seconds);
    if (kept_.size() < kCapacity) return;
    for (size_t i = 0; 2 * i < kept_.size(); ++i) kept_[i] = kept_[2 * i];  // keep every other
    kept_.resize((kept_.size() + 1) / 2);
    stride_ *= 2;
  }

  // 0 when no step was kept.
  double median() const {
    if (kept_.empty()) return 0;
    std::vector<double> v = kept_;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
  size_t size() const { return kept_.size(); }

 private:
  int64_t warmup_;
  int64_t seen_ = 0;
  int64_t stride_ = 1;
  std::vector<double> kept_;
};

}  // namespace wt
