#pragma once
// A layer's call with its node named in what it throws. Out of memory (exit 3) says which tensors
// the node was making; a device library's failure (exit 1: a cuDNN status, a cuBLAS one) names the
// node, its pass and the shapes of its inputs, which the library's message cannot. The executor
// adds the instruction and stream (Executor::issue).
#include <string>
#include <vector>

#include "mem/caching_allocator.hpp"
#include "model/graph.hpp"
#include "tensor/tensor.hpp"
#include "util/device_library_error.hpp"

namespace wt {

// "node 'conv1' (conv2d, model line 12) forward of [64, 1, 28, 28]"
std::string node_call_description(const Node& node, const char* pass,
                                  const std::vector<const Tensor*>& inputs);

// `making`: what an out-of-memory failure was allocating ("the input gradients").
template <class Call>
void call_node(const Node& node, const char* pass, const char* making,
               const std::vector<const Tensor*>& inputs, Call&& call) {
  try {
    call();
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(making) + " of node '" + node.name + "': " + e.what(),
                      e.requested);
  } catch (const DeviceLibraryError& e) {
    throw DeviceLibraryError(node_call_description(node, pass, inputs) + ": " + e.what());
  }
}

}  // namespace wt
