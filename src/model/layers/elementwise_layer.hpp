#pragma once
// The shape of every activation layer: y = f(x) elementwise, any shape, no keys, nothing saved
// but the input and output the graph keeps anyway. A layer of this kind is a small function
// struct in its own file pair (relu, gelu) with the usual one-line registration:
//
//   struct ReluFunction {
//     static constexpr const char* kType = "relu";
//     static constexpr double kFlopsPerElement = 3;  // forward + backward (x3 convention)
//     static void forward(const OpsBackend& ops, const float* x, float* y, int64_t n);
//     static void backward(const OpsBackend& ops, const float* x, const float* y,
//                          const float* dy, float* dx, int64_t n);
//   };
//   using Relu = ElementwiseLayer<ReluFunction>;
#include <stdexcept>
#include <string>

#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

template <class Function>
class ElementwiseLayer : public Layer {
 public:
  explicit ElementwiseLayer(const LayerArgs& args) { (void)args; }
  const char* type() const override { return Function::kType; }

  Shape infer(const std::vector<Shape>& inputs) override {
    if (inputs.size() != 1)
      throw std::invalid_argument(std::string(Function::kType) + " takes exactly one input, got " +
                                  std::to_string(inputs.size()));
    sample_numel_ = shape_numel(inputs[0]);
    return inputs[0];
  }

  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override {
    (void)saved;
    out = ctx.empty(in[0]->shape());
    Function::forward(*ctx.ops, in[0]->device_ptr(), out.device_ptr(), out.numel());
  }

  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override {
    (void)saved;
    if (!din[0]) return;
    *din[0] = ctx.empty(out.shape());
    Function::backward(*ctx.ops, in[0]->device_ptr(), out.device_ptr(), dout.device_ptr(),
                       din[0]->device_ptr(), out.numel());
  }

  double flops_per_sample() const override {
    return Function::kFlopsPerElement * static_cast<double>(sample_numel_);
  }

 private:
  int64_t sample_numel_ = 0;
};

}  // namespace wt
