// The weight number formats and their conversions (see dtype.h).
#include "dtype.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attn {

double exact_float(float x) {
  // The fewest significant digits that read back as x, by halving 1 … 9 (9 always do; if d digits do, so
  // do d + 1: the nearer decimal): ~3 prints instead of up to 9 (getState writes thousands).
  char text[32];
  const auto reads_back = [&](int digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(x));
    return std::strtof(text, nullptr) == x;
  };
  int lo = 1, hi = 9;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (reads_back(mid)) hi = mid;
    else lo = mid + 1;
  }
  reads_back(lo);
  return std::strtod(text, nullptr);
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::F32: return "F32";
    case Dtype::F16: return "F16";
    case Dtype::BF16: return "BF16";
  }
  return "?";
}

std::size_t dtype_bytes(Dtype d) { return d == Dtype::F32 ? 4 : 2; }

bool dtype_from_name(const std::string& name, Dtype& out) {
  if (name == "F32") out = Dtype::F32;
  else if (name == "F16") out = Dtype::F16;
  else if (name == "BF16") out = Dtype::BF16;
  else return false;
  return true;
}

float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint32_t float_to_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN (payload kept)
  if (exponent != 0) return bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa · 2^-24, exact in float (at most 10 significant bits).
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return bits_to_float(sign | float_to_bits(magnitude));
}

float bf16_to_float(std::uint16_t b) { return bits_to_float(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t float_to_half(float f) {
  std::uint32_t x = float_to_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u | static_cast<std::uint16_t>((x >> 13) & 0x3ffu);  // NaN, quiet
  // 65520 is halfway between 65504 (the largest half, odd mantissa) and 65536: ties go up to inf.
  if (x >= 0x477ff000u) return sign | 0x7c00u;
  if (x < 0x38800000u) {
    // Below 2^-14: a half subnormal k · 2^-24. The product is exact, so rounding it to an integer
    // (ties to even, the default rounding mode) is exactly round-to-nearest-even; 1024 is the
    // smallest normal half, which the bits also read correctly.
    const float units = std::nearbyint(bits_to_float(x) * 16777216.0f);
    return sign | static_cast<std::uint16_t>(units);
  }
  const std::uint32_t odd = (x >> 13) & 1u;
  x += 0x0fffu + odd;    // round the 13 dropped bits to nearest, ties to even
  x -= 0x38000000u;      // exponent bias 127 → 15
  return sign | static_cast<std::uint16_t>(x >> 13);
}

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // NaN, quiet
  const std::uint32_t odd = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7fffu + odd) >> 16);
}

}  // namespace attn
