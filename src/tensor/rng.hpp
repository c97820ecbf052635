#pragma once
// A small, portable, serialisable random generator (SplitMix64). Same seed -> same stream on every
// platform and compiler, which std::mt19937 + std:: distributions do not promise; the whole state
// is one uint64 so checkpoints can store it.
#include <cmath>
#include <cstdint>

namespace wt {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return (next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  float uniform(float lo, float hi) { return lo + float(uniform()) * (hi - lo); }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n ? next_u64() % n : 0; }
  float normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  // A child generator whose stream does not overlap ours in practice.
  Rng fork(uint64_t salt) { return Rng(next_u64() ^ (salt * 0xD1B54A32D192ED03ull)); }
  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace wt
