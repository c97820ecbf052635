#pragma once
// The check for NCCL result codes (CUDA builds only): WT_NCCL_CHECK(ncclAllReduce(...)) throws
// std::runtime_error naming the call, the file and line, and NCCL's message.
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace wt {

inline void nccl_check(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess)
    throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                             ": " + ncclGetErrorString(rc));
}

}  // namespace wt

#define WT_NCCL_CHECK(call) ::wt::nccl_check((call), #call, __FILE__, __LINE__)
