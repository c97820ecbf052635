#pragma once
// bfloat16 on the host: rounding FP32 to it, and whether this CPU computes with it. A bf16 value
// is the high 16 bits of an FP32 one, so "rounded to bf16" below is either those 16 bits or an
// FP32 whose low 16 bits are zero (the same number, for kernels that only take FP32).
#include <cstdint>

namespace wt::ops {

// Round to nearest even (ops/portable/bf16.hpp, the GPU's rounding too); NaN stays NaN.
uint16_t to_bf16(float x);
float from_bf16(uint16_t h);
inline float round_to_bf16(float x) { return from_bf16(to_bf16(x)); }

// y[i] = to_bf16(x[i]) for rows x cols of x (row stride ld_x), written densely (row stride cols).
void to_bf16_rows(const float* x, int64_t rows, int64_t cols, int64_t ld_x, uint16_t* y);
// x (FP32 [n, c, hw], plain NCHW) rounded to bf16 into oneDNN's nChw16c layout: channels in
// blocks of 16, innermost ([n][ceil(c / 16)][hw][16]), the last block's channels past c zero. One
// pass over x, where oneDNN's own FP32-to-bf16 reorder into that layout took four times as long
// as its FP32-to-FP32 one (bench/conv2d_dnnl.sh). Rounds as to_bf16_rows does.
void to_bf16_nchw16c(const float* x, int64_t n, int64_t c, int64_t hw, uint16_t* y);
// y[i] = round_to_bf16(x[i]); y may be x.
void round_to_bf16(const float* x, float* y, int64_t n);

// Whether oneDNN runs bf16 convolutions and matrix products natively on this CPU (AVX512-BF16 or
// AMX), as oneDNN's ISA query reports it (DNNL_MAX_CPU_ISA can lower it). Without it, oneDNN
// would emulate bf16 slower than FP32, so train.precision = "bf16" is refused instead.
bool host_computes_bf16();
// The ISA oneDNN reports, for that refusal's message.
const char* host_cpu_isa_name();

}  // namespace wt::ops
