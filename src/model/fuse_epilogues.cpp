#include "model/fuse_epilogues.hpp"

#include <memory>
#include <string>

namespace wt {

namespace {

// What stays of a folded ReLU: its tensors pass through (the output and its gradient are the
// neighbours'), and its FLOPs still count, since its neighbours now do its arithmetic.
class FoldedRelu final : public Layer {
 public:
  FoldedRelu(const Layer& relu, std::string type)
      : type_(std::move(type)), flops_(relu.flops_per_sample()) {
    set_name(relu.name());
  }
  const char* type() const override { return type_.c_str(); }
  Shape infer(const std::vector<Shape>& inputs) override { return inputs.at(0); }
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override {
    (void)saved;
    (void)ctx;
    out = *in[0];
  }
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override {
    (void)in;
    (void)out;
    (void)saved;
    (void)ctx;
    if (din[0]) *din[0] = dout;
  }
  double flops_per_sample() const override { return flops_; }
  bool passes_through() const override { return true; }

 private:
  std::string type_;
  double flops_;
};

// The one layer reading node `relu`'s output, when it reads nothing else and takes the mask.
bool reader_takes_mask(Graph& graph, const std::vector<int>& readers) {
  if (readers.size() != 1) return false;
  Node& reader = graph.nodes[size_t(readers[0])];
  return reader.inputs.size() == 1 && reader.layer->fuse_relu_input_mask();
}

}  // namespace

int fuse_epilogues(Graph& graph) {
  const std::vector<std::vector<int>> readers = graph.consumers();
  int folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& relu = graph.nodes[i];
    if (relu.type != "relu" || relu.inputs.size() != 1 || relu.inputs[0] == kGraphInput) continue;
    const int source = relu.inputs[0];
    Node& producer = graph.nodes[size_t(source)];
    // Another reader of the producer needs its output before the ReLU.
    if (readers[size_t(source)].size() != 1 || !producer.layer->can_fuse_relu_epilogue()) continue;
    const bool reader_masks = reader_takes_mask(graph, readers[i]);
    producer.layer->fuse_relu_epilogue(/*mask_gradient=*/!reader_masks);
    relu.layer = std::make_unique<FoldedRelu>(*relu.layer, relu.type);
    ++folded;
  }
  return folded;
}

}  // namespace wt
