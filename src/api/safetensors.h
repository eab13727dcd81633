// A streaming reader for the safetensors format: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}} (plus an optional "__metadata__"), then the raw data. The
// bytes may arrive in chunks of any size (a file read piece by piece, a download); each tensor is
// converted to float straight into the place its owner gives, so the file is never held whole.
// Not a model loader: model_files.h decides where each tensor goes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn {

enum class Dtype { F32, F16, BF16 };
const char* dtype_name(Dtype d);

// Largest JSON header accepted (a header past it is refused before anything is allocated).
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 16u << 20;

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte offsets inside the data section
  std::int64_t elements() const;
};

// Every problem throws std::invalid_argument("<file name>: <what is wrong>").
class SafetensorsReader {
 public:
  // Where tensor `info` goes: a buffer of info.elements() floats, or nullptr to skip its bytes.
  // Called once per tensor, in the header's order, right after the header is read; it may throw.
  using Destination = std::function<float*(const TensorInfo& info)>;

  // file_size: the whole file's bytes when known (0: unknown; checked at finish()).
  SafetensorsReader(std::string file_name, std::uint64_t file_size, Destination destination);
  void feed(const std::uint8_t* data, std::size_t n);
  // All bytes arrived (exactly 8 + header + data): throws when the file is shorter or longer.
  void finish();
  bool header_read() const { return header_read_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // sorted by offset
  std::uint64_t bytes_received() const { return received_; }

 private:
  // implementation members are the reader author's to add
  std::string file_name_;
  std::uint64_t file_size_ = 0, received_ = 0;
  Destination destination_;
  bool header_read_ = false;
  std::vector<TensorInfo> tensors_;
};

}  // namespace attn
