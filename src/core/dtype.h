// The number formats a model's weights come in (safetensors' F32, F16, BF16) and the exact
// conversions between them. Core, not a file reader: the loader and the 16-bit matmul share these.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

enum class Dtype { F32, F16, BF16 };
const char* dtype_name(Dtype d);
std::size_t dtype_bytes(Dtype d);
// "F32", "F16", "BF16" → the dtype; false for any other name.
bool dtype_from_name(const std::string& name, Dtype& out);

// Exact on every input: a half's subnormals, infinities and NaNs become the same float; a float
// becomes the nearest half or bfloat16 (ties to even), overflow to infinity, NaN stays NaN (quiet)
// with its sign.
float half_to_float(std::uint16_t h);
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_half(float f);
std::uint16_t float_to_bf16(float f);
// A 16-bit value of `dtype` (F16 or BF16) as a float.
inline float widen16(Dtype dtype, std::uint16_t v) { return dtype == Dtype::BF16 ? bf16_to_float(v) : half_to_float(v); }

// The shortest decimal that reads back as the same float, as a double (0.1f -> 0.1, not
// 0.10000000149011612): what a float is written as in JSON.
double exact_float(float x);

float bits_to_float(std::uint32_t bits);
std::uint32_t float_to_bits(float f);

}  // namespace attn
