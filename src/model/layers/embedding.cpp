#include "model/layers/embedding.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

Embedding::Embedding(const LayerArgs& args)
    : vocab_(args.get_int("vocab", 1, int64_t(1) << 24)),
      dim_(args.get_int("dim", 1, int64_t(1) << 20)) {}

Shape Embedding::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("embedding takes exactly one input");
  if (inputs[0].size() != 1)
    throw std::invalid_argument("embedding expects token ids [T] per sample, got " +
                                shape_str(inputs[0]));
  tokens_ = inputs[0][0];
  return {tokens_, dim_};
}

std::vector<Layer::ParamSpec> Embedding::param_specs() const {
  return {{"weight", {vocab_, dim_}}};
}

void Embedding::init(Rng& rng) {
  float* w = params_[0]->value.data();
  for (int64_t i = 0; i < params_[0]->value.numel(); ++i) w[i] = 0.02f * rng.normal();
}

int64_t Embedding::token_id(float value, int64_t position) const {
  const int64_t id = static_cast<int64_t>(value);
  if (float(id) != value || id < 0 || id >= vocab_)
    throw std::out_of_range("embedding '" + name() + "': input " + std::to_string(value) +
                            " at position " + std::to_string(position) +
                            " is not a token id in [0, " + std::to_string(vocab_) +
                            ") (is the dataset a token dataset with this vocabulary?)");
  return id;
}

void Embedding::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                        const LayerContext& ctx) {
  (void)saved;
  const Tensor& ids = *in[0];
  const int64_t rows = ids.numel();
  out = Tensor::empty({ids.dim(0), tokens_, dim_}, ctx.stream);
  const float* w = params_[0]->value.data();
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.data() + r * dim_, w + token_id(ids.data()[r], r) * dim_,
                sizeof(float) * size_t(dim_));
}

void Embedding::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                         const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                         const LayerContext& ctx) {
  (void)out;
  (void)saved;
  const Tensor& ids = *in[0];
  float* dw = params_[0]->grad.data();
  const float* dy = dout.data();
  for (int64_t r = 0; r < ids.numel(); ++r) {
    float* row = dw + token_id(ids.data()[r], r) * dim_;
    for (int64_t j = 0; j < dim_; ++j) row[j] += dy[r * dim_ + j];
  }
  if (din[0]) *din[0] = Tensor::zeros(ids.shape(), ctx.stream);
}

// A row copy forward and a row add backward: about 2 flops per output element.
double Embedding::flops_per_sample() const { return 2.0 * double(tokens_ * dim_); }

WT_REGISTER_LAYER("embedding", Embedding);

}  // namespace wt
