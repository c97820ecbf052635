#pragma once
// The arithmetic of a job's matrix products (train.precision), chosen once per device context and
// fixed for its life. fp32: everything in FP32. bf16: GEMM and convolution inputs (activations and
// weights) rounded to bfloat16, products accumulated and written in FP32 (PyTorch's CPU autocast);
// parameters, optimizer state, the loss and every other kernel stay FP32.
#include <cstdint>
#include <string>

namespace wt {

enum class Precision { Fp32, Bf16 };

// "fp32" or "bf16"; throws std::invalid_argument for anything else.
Precision parse_precision(const std::string& name);
const char* precision_name(Precision precision);

}  // namespace wt
