// Small text helpers of the files' readers and their messages (sizes, shapes, names).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// "12 MB" (rounded up: a message never says 0 MB of something that is there)
inline std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MB"; }

// "[768, 2304]"
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace attn
