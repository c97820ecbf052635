#include "ops/host/optimizers.hpp"

#include <cmath>
#include <stdexcept>

namespace wt {

Optimizer::~Optimizer() = default;

int64_t Optimizer::step_count(int stage) const {
  auto it = steps_.find(stage);
  return it == steps_.end() ? 0 : it->second;
}

void Optimizer::set_step_count(int stage, int64_t n) { steps_[stage] = n; }

namespace {

void check_same_size(const Tensor& values, const Tensor& grads) {
  if (values.numel() != grads.numel())
    throw std::invalid_argument("optimizer step: " + std::to_string(values.numel()) +
                                " values but " + std::to_string(grads.numel()) + " gradients");
}

// Zeroed state tensors of one stage, all `numel` long.
struct StageState {
  std::vector<Tensor> tensors;
};

// Shared bookkeeping: per-stage state tensors with fixed names.
class StatefulOptimizer : public Optimizer {
 public:
  StatefulOptimizer(std::vector<std::string> names, CachingAllocator& allocator)
      : names_(std::move(names)), allocator_(allocator) {}

  void prepare(int stage, int64_t numel) override {
    auto it = states_.find(stage);
    if (it != states_.end()) {
      if (!it->second.tensors.empty() && it->second.tensors[0].numel() != numel)
        throw std::invalid_argument("optimizer state of stage " + std::to_string(stage) + " has " +
                                    std::to_string(it->second.tensors[0].numel()) +
                                    " elements, asked for " + std::to_string(numel));
      return;
    }
    StageState s;
    for (size_t i = 0; i < names_.size(); ++i)
      s.tensors.push_back(Tensor::zeros({numel}, allocator_));
    states_.emplace(stage, std::move(s));
  }

  std::vector<std::string> state_names() const override { return names_; }

  std::vector<std::pair<std::string, Tensor*>> state(int stage) override {
    std::vector<std::pair<std::string, Tensor*>> named;
    auto it = states_.find(stage);
    if (it == states_.end()) return named;
    for (size_t i = 0; i < names_.size(); ++i)
      named.emplace_back(names_[i], &it->second.tensors[i]);
    return named;
  }

 protected:
  // The stage's state tensors, allocated on first use; counts the step.
  std::vector<Tensor>& begin_step(int stage, const Tensor& values, const Tensor& grads) {
    check_same_size(values, grads);
    prepare(stage, values.numel());
    return states_[stage].tensors;
  }

 private:
  std::vector<std::string> names_;
  CachingAllocator& allocator_;
  std::map<int, StageState> states_;
};

// torch.optim.SGD with dampening 0:
//   d = g + wd * w
//   b = d on the first step, else b = mu * b + d      (only when mu != 0)
//   d = nesterov ? d + mu * b : b                      (only when mu != 0)
//   w -= lr * d
template <bool kMomentum, bool kFirst, bool kNesterov>
void sgd_update(int64_t n, float* __restrict w, const float* __restrict g, float* __restrict b,
                float lr, float wd, float mu) {
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i] + wd * w[i];
    if (kMomentum) {
      const float buf = kFirst ? d : mu * b[i] + d;
      b[i] = buf;
      d = kNesterov ? d + mu * buf : buf;
    }
    w[i] = w[i] - lr * d;
  }
}

class Sgd : public StatefulOptimizer {
 public:
  Sgd(const OptimizerOptions& c, CachingAllocator& allocator)
      : StatefulOptimizer(
            c.momentum != 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{},
            allocator),
        momentum_(static_cast<float>(c.momentum)),
        weight_decay_(static_cast<float>(c.weight_decay)),
        nesterov_(c.nesterov) {
    if (nesterov_ && momentum_ <= 0)
      throw std::invalid_argument("sgd: nesterov momentum needs momentum > 0");
  }

  void step(int stage, Tensor& values, const Tensor& grads, double lr) override {
    std::vector<Tensor>& s = begin_step(stage, values, grads);
    const int64_t n = values.numel();
    float* w = values.data();
    const float* g = grads.data();
    const float lr_f = static_cast<float>(lr);
    if (momentum_ == 0) {
      sgd_update<false, false, false>(n, w, g, nullptr, lr_f, weight_decay_, 0);
    } else {
      float* b = s[0].data();
      const bool first = step_count(stage) == 0;
      if (first && nesterov_)
        sgd_update<true, true, true>(n, w, g, b, lr_f, weight_decay_, momentum_);
      if (first && !nesterov_)
        sgd_update<true, true, false>(n, w, g, b, lr_f, weight_decay_, momentum_);
      if (!first && nesterov_)
        sgd_update<true, false, true>(n, w, g, b, lr_f, weight_decay_, momentum_);
      if (!first && !nesterov_)
        sgd_update<true, false, false>(n, w, g, b, lr_f, weight_decay_, momentum_);
    }
    steps_[stage] = step_count(stage) + 1;
  }

 private:
  float momentum_, weight_decay_;
  bool nesterov_;
};

// Vectorises only without errno handling for sqrt (GCC: -fno-math-errno, set for this file in
// src/CMakeLists.txt); v >= 0 here, so errno would never be set anyway.
void adamw_update(int64_t n, float* __restrict w, const float* __restrict g, float* __restrict m,
                  float* __restrict v, float decay, float b1, float one_minus_b1, float b2,
                  float one_minus_b2, float step_size, float bias2_sqrt, float eps) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = b1 * m[i] + one_minus_b1 * gi;
    const float vi = b2 * v[i] + one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / bias2_sqrt + eps;
    w[i] = w[i] * decay - step_size * mi / denom;
  }
}

// torch.optim.AdamW (amsgrad off), at step t (1-based):
//   w *= 1 - lr * wd
//   m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g * g
//   w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
class AdamW : public StatefulOptimizer {
 public:
  AdamW(const OptimizerOptions& c, CachingAllocator& allocator)
      : StatefulOptimizer({"exp_avg", "exp_avg_sq"}, allocator),
        beta1_(c.beta1),
        beta2_(c.beta2),
        eps_(c.eps),
        weight_decay_(c.weight_decay) {}

  void step(int stage, Tensor& values, const Tensor& grads, double lr) override {
    std::vector<Tensor>& s = begin_step(stage, values, grads);
    const int64_t t = step_count(stage) + 1;
    const int64_t n = values.numel();
    float* w = values.data();
    const float* g = grads.data();
    float* m = s[0].data();
    float* v = s[1].data();
    const float decay = static_cast<float>(1.0 - lr * weight_decay_);
    const float b1 = static_cast<float>(beta1_), one_minus_b1 = static_cast<float>(1.0 - beta1_);
    const float b2 = static_cast<float>(beta2_), one_minus_b2 = static_cast<float>(1.0 - beta2_);
    const double bias1 = 1.0 - std::pow(beta1_, static_cast<double>(t));
    const double bias2 = 1.0 - std::pow(beta2_, static_cast<double>(t));
    const float step_size = static_cast<float>(lr / bias1);
    const float bias2_sqrt = static_cast<float>(std::sqrt(bias2));
    const float eps = static_cast<float>(eps_);
    adamw_update(n, w, g, m, v, decay, b1, one_minus_b1, b2, one_minus_b2, step_size, bias2_sqrt,
                 eps);
    steps_[stage] = t;
  }

 private:
  double beta1_, beta2_, eps_, weight_decay_;
};

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& config,
                                          CachingAllocator& allocator) {
  if (config.kind == "sgd") return std::make_unique<Sgd>(config, allocator);
  if (config.kind == "adamw") return std::make_unique<AdamW>(config, allocator);
  throw std::invalid_argument("unknown optimizer.kind '" + config.kind + "' (known: sgd, adamw)");
}

}  // namespace wt
