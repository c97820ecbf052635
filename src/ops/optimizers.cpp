#include "ops/optimizers.hpp"

#include <cmath>
#include <stdexcept>

#include "ops/kernel_args.hpp"

namespace wt {

Optimizer::~Optimizer() = default;

int64_t Optimizer::step_count(int stage) const {
  auto it = steps_.find(stage);
  return it == steps_.end() ? 0 : it->second;
}

void Optimizer::set_step_count(int stage, int64_t n) { steps_[stage] = n; }

void Optimizer::uncount_step(int stage) {
  if (step_count(stage) <= 0)
    throw std::logic_error("optimizer: uncount_step on stage " + std::to_string(stage) +
                           " that has no step");
  steps_[stage] = step_count(stage) - 1;
}

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
  StatefulOptimizer(std::vector<std::string> names, DeviceContext& device)
      : device_(device), names_(std::move(names)), allocator_(device.allocator()) {}

  void prepare(int stage, int64_t numel, int stream = -1) override {
    auto it = states_.find(stage);
    if (it != states_.end()) {
      if (!it->second.tensors.empty() && it->second.tensors[0].numel() != numel)
        throw std::invalid_argument("optimizer state of stage " + std::to_string(stage) + " has " +
                                    std::to_string(it->second.tensors[0].numel()) +
                                    " elements, asked for " + std::to_string(numel));
      return;
    }
    StageState s;
    for (size_t i = 0; i < names_.size(); ++i) {
      try {
        if (stream < 0) {
          s.tensors.push_back(Tensor::zeros({numel}, allocator_));
        } else {
          s.tensors.push_back(Tensor::empty({numel}, allocator_, stream));
          s.tensors.back().fill_async(0.0f, stream);
        }
        s.tensors.back().set_label("the optimizer's " + names_[i] + " of stage " +
                                   std::to_string(stage));
      } catch (const OutOfMemory& e) {
        throw OutOfMemory("the optimizer's " + names_[i] + " of stage " + std::to_string(stage) +
                              " (" + std::to_string(numel) + " floats): " + e.what(),
                          e.requested);
      }
    }
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
  std::vector<Tensor>& begin_step(int stage, const Tensor& values, const Tensor& grads,
                                  int stream) {
    check_same_size(values, grads);
    prepare(stage, values.numel(), stream);
    return states_[stage].tensors;
  }
  DeviceContext& device_;  // the updates run on its streams

 private:
  std::vector<std::string> names_;
  CachingAllocator& allocator_;
  std::map<int, StageState> states_;
};

// torch.optim.SGD with dampening 0 (the update: ops/host/optimizer_updates.hpp).
class Sgd : public StatefulOptimizer {
 public:
  Sgd(const OptimizerOptions& c, DeviceContext& device)
      : StatefulOptimizer(
            c.momentum != 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{},
            device),
        momentum_(static_cast<float>(c.momentum)),
        weight_decay_(static_cast<float>(c.weight_decay)),
        nesterov_(c.nesterov) {
    if (nesterov_ && momentum_ <= 0)
      throw std::invalid_argument("sgd: nesterov momentum needs momentum > 0");
  }

  void step(int stage, Tensor& values, const Tensor& grads, double lr, int stream,
            const float* skip) override {
    std::vector<Tensor>& s = begin_step(stage, values, grads, stream);
    const int64_t n = values.numel();
    float* w = values.device_ptr();
    const float* g = grads.device_ptr();
    ops::SgdUpdate u;
    u.lr = static_cast<float>(lr);
    u.weight_decay = weight_decay_;
    u.momentum = momentum_;
    u.first = step_count(stage) == 0;
    u.nesterov = nesterov_;
    const float per_step[ops::kSgdPerStep] = {u.lr, u.first ? 1.0f : 0.0f};
    u.per_step = per_step_values(stage, per_step, ops::kSgdPerStep, stream);
    device_.ops(stream).sgd_update(u, n, w, g, momentum_ == 0 ? nullptr : s[0].device_ptr(), skip);
    steps_[stage] = step_count(stage) + 1;
  }

 private:
  float momentum_, weight_decay_;
  bool nesterov_;
};

// torch.optim.AdamW (amsgrad off), at step t (1-based):
//   w *= 1 - lr * wd
//   m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g * g
//   w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
class AdamW : public StatefulOptimizer {
 public:
  AdamW(const OptimizerOptions& c, DeviceContext& device)
      : StatefulOptimizer({"exp_avg", "exp_avg_sq"}, device),
        beta1_(c.beta1),
        beta2_(c.beta2),
        eps_(c.eps),
        weight_decay_(c.weight_decay) {}

  void step(int stage, Tensor& values, const Tensor& grads, double lr, int stream,
            const float* skip) override {
    std::vector<Tensor>& s = begin_step(stage, values, grads, stream);
    const int64_t t = step_count(stage) + 1;
    const int64_t n = values.numel();
    float* w = values.device_ptr();
    const float* g = grads.device_ptr();
    ops::AdamWUpdate u;
    u.decay = static_cast<float>(1.0 - lr * weight_decay_);
    u.b1 = static_cast<float>(beta1_);
    u.one_minus_b1 = static_cast<float>(1.0 - beta1_);
    u.b2 = static_cast<float>(beta2_);
    u.one_minus_b2 = static_cast<float>(1.0 - beta2_);
    const double bias1 = 1.0 - std::pow(beta1_, static_cast<double>(t));
    const double bias2 = 1.0 - std::pow(beta2_, static_cast<double>(t));
    u.step_size = static_cast<float>(lr / bias1);
    u.bias2_sqrt = static_cast<float>(std::sqrt(bias2));
    u.eps = static_cast<float>(eps_);
    const float per_step[ops::kAdamWPerStep] = {u.decay, u.step_size, u.bias2_sqrt};
    u.per_step = per_step_values(stage, per_step, ops::kAdamWPerStep, stream);
    device_.ops(stream).adamw_update(u, n, w, g, s[0].device_ptr(), s[1].device_ptr(), skip);
    steps_[stage] = t;
  }

 private:
  double beta1_, beta2_, eps_, weight_decay_;
};

}  // namespace

void Optimizer::use_per_step_values(DeviceContext& device) {
  if (!per_step_) per_step_ = std::make_unique<PerStepValues>(device);
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& config, DeviceContext& device) {
  if (config.kind == "sgd") return std::make_unique<Sgd>(config, device);
  if (config.kind == "adamw") return std::make_unique<AdamW>(config, device);
  throw std::invalid_argument("unknown optimizer.kind '" + config.kind + "' (known: sgd, adamw)");
}

}  // namespace wt
