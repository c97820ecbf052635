#pragma once
// The layer interface. A layer is one file pair in model/layers/ with a one-line registration
// (WT_REGISTER_LAYER). Layers hold parameters only; everything a layer keeps from forward to
// backward for one batch lives in a Saved record owned by the executor, so several batches can be
// in flight at once (pipelines, waves).
#include <memory>
#include <string>
#include <vector>

#include "model/backward_part.hpp"
#include "ops/ops_backend.hpp"
#include "tensor/rng.hpp"
#include "tensor/tensor.hpp"

namespace wt {

enum class Mode { Train, Eval };

struct Param {
  std::string name;  // "<layer>.<param>", e.g. "conv1.weight"
  Tensor value;      // a slice of the stage's flat parameter buffer
  Tensor grad;       // a slice of the stage's flat gradient buffer; backward accumulates (+=)
};

// Non-trained state that a checkpoint must keep (batchnorm running statistics).
struct Buffer {
  std::string name;
  Tensor value;
};

struct LayerContext {
  Mode mode = Mode::Train;
  // Dropout masks: the global batch's generator (not advanced by layers), keyed per node and per
  // sample, so a sample's mask is the same whichever rank and part computes it.
  Rng* rng = nullptr;
  // Or, in a step captured or replayed as a graph, rng's state in pinned memory, which the kernel
  // reads when it runs (a graph replays the value a kernel was given by value).
  const uint64_t* pinned_rng_state = nullptr;
  int64_t first_sample = 0;          // the global index, in its batch, of this call's first sample
  const int64_t* samples = nullptr;  // or, when rows are not consecutive samples (burst), each's
  int64_t sample_index(int64_t row) const { return samples ? samples[row] : first_sample + row; }
  int node = 0;                     // the node being run (its index in the graph)
  const int32_t* labels = nullptr;  // the batch's labels, labels_per_sample() each (loss layers)
  float loss_scale = 1.0f;          // 1 / global batch: per-rank loss sums to the global mean
  double* totals = nullptr;  // loss layers: device memory, += {loss sum, correct} (or nullptr)
  // Ops' record of a bad input found on the device (a token id), read back with the step's
  // results (ops/portable/rows.hpp's InputCheck); nullptr: the op checks synchronously.
  float* input_check = nullptr;
  int stream = 0;                         // the instruction's stream: its allocations' stream
  CachingAllocator* allocator = nullptr;  // the device's (the executor's model's)
  const OpsBackend* ops = nullptr;        // the device's kernels
  // backward: the whole pass, or one half of it (only on a layer whose splits_backward()).
  BackwardPart backward_part = BackwardPart::Whole;
  // Test only, the planted bug OpScratchAtIssue: workspace() reserves nothing, so the op takes
  // its own (strict_ops.cpp models CudaOps' fallback).
  bool op_takes_scratch = false;

  // New tensors for this call's outputs and temporaries: the device's memory, this stream.
  Tensor empty(const Shape& shape) const { return Tensor::empty(shape, *allocator, stream); }
  // Zeroed by a kernel on this stream, not by Tensor::zeros' blocking fill (a synchronisation,
  // which a step captured as a graph may not hold).
  Tensor zeros(const Shape& shape) const {
    Tensor t = empty(shape);
    ops->fill(0.0f, t.device_ptr(), t.numel());
    return t;
  }
  // A kernel's workspace (a convolution's), taken by host code at issue and given back when the
  // call returns (stream order keeps it the kernel's). Taken here and never inside the ops: a
  // replayed graph step's kernel calls launch nothing (device/graph_replay_ops.hpp), so an op's
  // own allocation would be in the capture and missing from every replay. Empty for 0 floats.
  Tensor workspace(int64_t floats) const {
    return floats > 0 && !op_takes_scratch ? empty({floats}) : Tensor();
  }
  // Where a kernel takes its temporaries: `reserved`, workspace()'s (empty when it needs none).
  Scratch scratch(const Tensor& reserved) const {
    return Scratch{allocator, stream, reserved.defined() ? reserved.device_ptr() : nullptr};
  }
};

// What forward leaves for backward, per batch in flight.
struct Saved {
  std::vector<Tensor> tensors;
  double scalar = 0.0;  // a host-side flag for backward (batch norm: whether batch statistics)
};

class Layer {
 public:
  virtual ~Layer() = default;
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  virtual const char* type() const = 0;
  // Per-sample input shapes (no batch dimension) -> per-sample output shape. Throws
  // std::invalid_argument with a readable message on a mismatch; the graph turns it into an
  // InputError naming the model file and line.
  virtual Shape infer(const std::vector<Shape>& inputs) = 0;
  // Parameter shapes and names, known after infer(); the model lays them out in flat buffers.
  struct ParamSpec {
    std::string name;
    Shape shape;
  };
  virtual std::vector<ParamSpec> param_specs() const { return {}; }
  virtual std::vector<ParamSpec> buffer_specs() const { return {}; }
  // Called once the model has bound params()/buffers() to storage.
  virtual void bind(std::vector<Param*> params, std::vector<Buffer*> buffers) {
    params_ = std::move(params);
    buffers_ = std::move(buffers);
  }
  virtual void init(Rng& rng) { (void)rng; }

  // in: batch-major tensors [N, ...]; out: allocated by the layer.
  virtual void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                       const LayerContext& ctx) = 0;
  // dout: gradient of the loss w.r.t. out. din[i] may be null when input i needs no gradient;
  // otherwise the layer allocates and overwrites *din[i]. Parameter gradients accumulate.
  virtual void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                        const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) = 0;
  // Whether backward runs in halves (ctx.backward_part): InputGradient fills din alone and leaves
  // the parameter gradients; ParamGradient (din all null) accumulates them alone; together they
  // compute exactly what the whole pass does.
  virtual bool splits_backward() const { return false; }

  // Epilogue fusion (model/fuse_epilogues.hpp). A layer whose output only a ReLU reads may take
  // that ReLU into its output pass: true when it can (then fuse_relu_epilogue follows).
  virtual bool can_fuse_relu_epilogue() const { return false; }
  // Apply the ReLU to the output in forward; with `mask_gradient`, also mask the output gradient
  // in backward (else the ReLU's reader does, having taken fuse_relu_input_mask).
  virtual void fuse_relu_epilogue(bool mask_gradient) { (void)mask_gradient; }
  // A layer whose one input is a ReLU's output may apply the ReLU's mask to the input gradient it
  // computes: true when it does from now on.
  virtual bool fuse_relu_input_mask() { return false; }

  // Channel-blocked activations (model/block_channels.hpp), on a device whose kernels take them
  // (OpsBackend::takes_blocked_activations): whether this layer can read its input, and write its
  // output given whether its input is blocked, in that layout; then which of them are.
  virtual bool can_block_input() const { return false; }
  virtual bool can_block_output(bool input_blocked) const {
    (void)input_blocked;
    return false;
  }
  virtual void block_channels(bool input, bool output) {
    (void)input;
    (void)output;
  }
  // A node that hands its input's tensor on as its output (a folded ReLU): layouts pass through.
  virtual bool passes_through() const { return false; }

  // Forward+backward multiply-adds*2 per sample, for FLOP-balanced stage cuts and the simulator.
  virtual double flops_per_sample() const { return 0.0; }
  virtual bool is_loss() const { return false; }
  // Loss layers: how many int32 labels each sample carries (T for per-token losses).
  virtual int64_t labels_per_sample() const { return 1; }

  const std::vector<Param*>& params() const { return params_; }
  const std::vector<Buffer*>& buffers() const { return buffers_; }

 protected:
  std::vector<Param*> params_;
  std::vector<Buffer*> buffers_;

 private:
  std::string name_;
};

}  // namespace wt
