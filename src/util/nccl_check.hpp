#pragma once
// The check for NCCL result codes (CUDA builds only): WT_NCCL_CHECK(ncclAllReduce(...)) throws
// DeviceLibraryError naming the call, the file and line, and NCCL's message.
#include <nccl.h>

#include <string>

#include "util/device_library_error.hpp"

namespace wt {

inline void nccl_check(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess)
    throw DeviceLibraryError(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                             ": " + ncclGetErrorString(rc));
}

}  // namespace wt

#define WT_NCCL_CHECK(call) ::wt::nccl_check((call), #call, __FILE__, __LINE__)
