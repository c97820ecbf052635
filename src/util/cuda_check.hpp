#pragma once
// The checks for CUDA, cuBLAS and cuDNN status codes (CUDA builds only): one macro per library,
// each throwing DeviceLibraryError naming the call, the file and line, and the library's message.
//   WT_CUDA_CHECK(cudaMalloc(&p, n));  WT_CUBLAS_CHECK(cublasSgemm(...));  WT_CUDNN_CHECK(...);
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "util/device_library_error.hpp"

namespace wt {

inline void cuda_fail(const char* call, const char* file, int line, const std::string& message) {
  throw DeviceLibraryError(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + message);
}
// Errors a kernel leaves behind for whichever call comes next: the call that reports one (and the
// layer the executor names) need not be the one that caused it.
inline bool sticky_cuda_error(cudaError_t s) {
  return s == cudaErrorIllegalAddress || s == cudaErrorLaunchFailure ||
         s == cudaErrorMisalignedAddress || s == cudaErrorAssert ||
         s == cudaErrorIllegalInstruction || s == cudaErrorHardwareStackError ||
         s == cudaErrorInvalidPc || s == cudaErrorInvalidAddressSpace;
}

inline void cuda_check(cudaError_t s, const char* call, const char* file, int line) {
  if (s == cudaSuccess) return;
  cuda_fail(call, file, line,
            std::string(cudaGetErrorString(s)) +
                (sticky_cuda_error(s) ? " (left by earlier asynchronous device work, not "
                                        "necessarily this call's: CUDA_LAUNCH_BLOCKING=1 finds "
                                        "the kernel)"
                                      : ""));
}
inline void cublas_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    cuda_fail(
        call, file, line,
        std::string(cublasGetStatusString(s)) + " (cuBLAS status " + std::to_string(int(s)) + ")");
}
inline void cudnn_check(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s != CUDNN_STATUS_SUCCESS) cuda_fail(call, file, line, cudnnGetErrorString(s));
}

}  // namespace wt

#define WT_CUDA_CHECK(call) ::wt::cuda_check((call), #call, __FILE__, __LINE__)
#define WT_CUBLAS_CHECK(call) ::wt::cublas_check((call), #call, __FILE__, __LINE__)
#define WT_CUDNN_CHECK(call) ::wt::cudnn_check((call), #call, __FILE__, __LINE__)
