// A streaming reader for the safetensors format: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}} (plus an optional "__metadata__"), then the raw data. The
// bytes may arrive in chunks of any size (a file read piece by piece, a download); each tensor goes
// straight into the place its owner gives (as floats, or kept 16-bit), so the file is never held whole.
// Also the writer (float tensors → F32, F16 or BF16 with round-to-nearest-even).
// Not a model loader: model_files.h decides where each tensor goes and what it is called.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../core/dtype.h"

namespace attn {

// A name from a file, fit for a one-line message: in quotes, control bytes escaped, cut at 80.
std::string quoted_name(const std::string& name);

// Largest JSON header accepted (a header past it is refused before anything is allocated).
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 16u << 20;
// Deepest nesting a header may have ({name: {shape: [..]}} is 3); deeper is refused before parsing.
constexpr int kMaxSafetensorsHeaderDepth = 3;

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte offsets inside the data section
  std::int64_t elements() const;
};

// Every problem throws std::invalid_argument("<file name>: <what is wrong>"). After a throw the
// reader stays failed: every later feed() or finish() throws the same message again.
// Where a tensor goes: info.elements() values of `dtype` (F32: floats; F16 / BF16: 16-bit values,
// the file's own bits when it has that format), or data == nullptr to skip its bytes.
struct TensorTarget {
  void* data = nullptr;
  Dtype dtype = Dtype::F32;
};

class SafetensorsReader {
 public:
  // Where tensor `info` goes. Called once per tensor, in the order of the data (by offset), right
  // after the whole header is read and checked (tensors() then lists them all); it may throw (the
  // reader then stays failed with that message).
  using Destination = std::function<TensorTarget(const TensorInfo& info)>;

  // file_size: the whole file's bytes when known (0: unknown; checked at finish()). When known, a
  // header or a tensor that reaches past it is refused as soon as the header is read.
  SafetensorsReader(std::string file_name, std::uint64_t file_size, Destination destination);
  ~SafetensorsReader();
  void feed(const std::uint8_t* data, std::size_t n);
  // All bytes arrived (exactly 8 + header + data): throws when the file is shorter or longer.
  void finish();
  bool header_read() const { return header_read_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // sorted by offset
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::uint64_t bytes_received() const { return received_; }
  // 8 + header + data once the header is read (0 before).
  std::uint64_t expected_size() const { return expected_size_; }

 private:
  [[noreturn]] void fail(const std::string& problem);
  void check_failed() const;
  void parse_header();
  void feed_data(const std::uint8_t* data, std::size_t n);

  std::string file_name_;
  std::uint64_t file_size_ = 0, received_ = 0;
  Destination destination_;
  bool header_read_ = false;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::string failure_;             // the message once failed ("" while fine)
  std::uint8_t length_bytes_[8] = {};
  std::uint64_t header_length_ = 0;
  std::string header_;              // the JSON header as it arrives
  std::uint64_t expected_size_ = 0;
  std::vector<TensorTarget> targets_;  // per tensor (in tensors_' order): where its values go
  std::size_t current_ = 0;         // the tensor whose bytes arrive now
  std::uint64_t data_pos_ = 0;      // bytes of the data section received
  std::int64_t element_ = 0;        // next element of the current tensor to write
  std::uint8_t partial_[4] = {};    // an element split across two chunks
  std::size_t partial_n_ = 0;
};

// One tensor for the writer: `shape` gives the element count (the product; [] is one scalar).
struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data = nullptr;
};

// Writes a safetensors file in the given order (names unique, not "__metadata__"), every tensor in
// `dtype`, the header padded with spaces to a multiple of 8 bytes as Hugging Face's writer does.
// Throws std::invalid_argument for a bad name or shape; std::runtime_error when the file cannot be
// written.
// The bytes go to `out` in pieces (the file's, in order): no stream, so the page's wasm links none.
using ByteSink = std::function<void(const char* bytes, std::size_t count)>;
void write_safetensors(const ByteSink& out, const std::vector<NamedTensor>& tensors, Dtype dtype,
                       const std::map<std::string, std::string>& metadata = {});
// ... as one string (a folder made in memory: the trained model's).
std::string safetensors_bytes(const std::vector<NamedTensor>& tensors, Dtype dtype,
                              const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors, Dtype dtype,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace attn
