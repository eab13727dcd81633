// A small seeded random generator (xoshiro256** + Box-Muller) that gives the same numbers natively
// and in wasm. Not std::normal_distribution: its output differs between standard libraries.
#pragma once
#include <cmath>
#include <cstdint>

#include "matrix.h"

namespace attn {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : state_) {  // splitmix64 spreads any seed (even 0) over the whole state
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9, t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                           // N(0, 1)
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]: log is finite
    const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 6.283185307179586 * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// A rows × cols matrix of N(0, 1) draws, filled row by row.
inline Matrix normal_matrix(Rng& rng, int rows, int cols) {
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(rng.normal());
  return m;
}

}  // namespace attn
