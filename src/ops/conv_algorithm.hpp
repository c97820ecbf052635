#pragma once
// How the host and strict devices run 2-D convolutions (device.conv_algorithm). auto: Winograd's
// F(2x2, 5x5) (ops/host/conv2d_winograd.hpp) for the 5x5 stride-1 FP32 convolutions whose channel
// counts are multiples of 16, oneDNN's direct convolution (or im2col + GEMM) for the rest, in a
// build whose vectors are 8 floats or wider (AVX, AVX-512): with SSE's 4 Winograd is slower than
// oneDNN's JIT kernels (bench/results/host-kernels.md); direct: never Winograd, the arithmetic of
// earlier versions. The GPU's cuDNN picks its own algorithms.
#include <stdexcept>
#include <string>

namespace wt {

enum class ConvAlgorithm { Auto, Direct };

// Whether "auto" runs Winograd in this build (its vector width), and a line saying which and why
// (wavetrain --version). Defined with the kernel, ops/host/conv2d_winograd.cpp.
bool winograd_pays_in_this_build();
const char* host_conv_description();

inline ConvAlgorithm parse_conv_algorithm(const std::string& name) {
  if (name == "auto") return ConvAlgorithm::Auto;
  if (name == "direct") return ConvAlgorithm::Direct;
  throw std::invalid_argument("unknown convolution algorithm '" + name + "' (auto or direct)");
}

}  // namespace wt
