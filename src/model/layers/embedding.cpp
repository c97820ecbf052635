#include "model/layers/embedding.hpp"

#include <cmath>
#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/param_init.hpp"

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
  ops::normal_fill(rng, 0.02f, params_[0]->value.data(), params_[0]->value.numel());
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

const int64_t* Embedding::token_ids(const Tensor& ids) {
  ids_.resize(size_t(ids.numel()));
  for (int64_t r = 0; r < ids.numel(); ++r) ids_[size_t(r)] = token_id(ids.data()[r], r);
  return ids_.data();
}

void Embedding::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                        const LayerContext& ctx) {
  (void)saved;
  const Tensor& ids = *in[0];
  const int64_t rows = ids.numel();
  out = ctx.empty({ids.dim(0), tokens_, dim_});
  ctx.ops->gather_rows(params_[0]->value.data(), token_ids(ids), rows, dim_, out.data());
}

void Embedding::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                         const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                         const LayerContext& ctx) {
  (void)out;
  (void)saved;
  const Tensor& ids = *in[0];
  ctx.ops->scatter_add_rows(dout.data(), token_ids(ids), ids.numel(), dim_,
                            params_[0]->grad.data());
  if (din[0]) *din[0] = ctx.zeros(ids.shape());
}

// A row copy forward and a row add backward: about 2 flops per output element.
double Embedding::flops_per_sample() const { return 2.0 * double(tokens_ * dim_); }

WT_REGISTER_LAYER("embedding", Embedding);

}  // namespace wt
