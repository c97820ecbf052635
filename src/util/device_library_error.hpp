#pragma once
// A device library's failure (CUDA, cuBLAS, cuDNN, NCCL): the call, where it was made and the
// library's own message (util/cuda_check.hpp, util/nccl_check.hpp). Plain C++, so the executor,
// which knows no CUDA, can add what the library could not say: the instruction, the layer and the
// shapes it was given (exec/node_call.hpp). Exit status 1, as any other runtime error.
#include <stdexcept>

namespace wt {

class DeviceLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace wt
