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

Tensor Embedding::token_ids(const Tensor& ids, const LayerContext& ctx) const {
  Tensor rows = ctx.empty({2 * ids.numel()});  // int64 ids, two floats' room each
  ctx.ops->token_ids(ids.device_ptr(), ids.numel(), vocab_, row_ids(rows), ctx.input_check);
  return rows;
}

void Embedding::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                        const LayerContext& ctx) {
  (void)saved;
  const Tensor& ids = *in[0];
  const int64_t rows = ids.numel();
  out = ctx.empty({ids.dim(0), tokens_, dim_});
  const Tensor table_rows = token_ids(ids, ctx);
  ctx.ops->gather_rows(params_[0]->value.device_ptr(), row_ids(table_rows), rows, dim_,
                       out.device_ptr());
}

void Embedding::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                         const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                         const LayerContext& ctx) {
  (void)out;
  (void)saved;
  const Tensor& ids = *in[0];
  const Tensor table_rows = token_ids(ids, ctx);
  ctx.ops->scatter_add_rows(dout.device_ptr(), row_ids(table_rows), ids.numel(), dim_,
                            params_[0]->grad.device_ptr(), vocab_);
  if (din[0]) *din[0] = ctx.zeros(ids.shape());
}

// A row copy forward and a row add backward: about 2 flops per output element.
double Embedding::flops_per_sample() const { return 2.0 * double(tokens_ * dim_); }

WT_REGISTER_LAYER("embedding", Embedding);

}  // namespace wt
