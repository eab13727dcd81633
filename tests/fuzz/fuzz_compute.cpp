// libFuzzer target: any bytes as a compute request. Must either return JSON or throw
// std::invalid_argument; never crash, hang or hit a sanitizer.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../../src/api/compute_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    attn::compute_text(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
