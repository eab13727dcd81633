// The safetensors reader (a push parser: bytes in, floats out in place) and writer.
// Not a model loader: names mean nothing here (model_files.cpp gives them a meaning).
#include "safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "text.h"

namespace attn {

std::int64_t TensorInfo::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// [SECTION] the reader -------------------------------------------------------------------------

namespace {

// Offsets and dimensions past this are refused, so sums and products below never overflow.
constexpr std::uint64_t kMaxOffset = std::uint64_t{1} << 62;

}  // namespace

std::string quoted_name(const std::string& name) {
  std::string out = "\"";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (shown >= 80 && (c & 0xc0) != 0x80) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
    ++shown;
  }
  return out + "\"";
}

namespace {



std::string range_text(const TensorInfo& t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
}

// Deepest bracket nesting outside strings (a header that is not JSON at all may answer anything).
int nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > 64) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A JSON number that is a whole, non-negative integer no larger than kMaxOffset; false otherwise.
bool read_count(const nlohmann::json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return out <= kMaxOffset;
  }
  if (v.is_number_integer()) {
    const std::int64_t i = v.get<std::int64_t>();
    if (i < 0) return false;
    out = static_cast<std::uint64_t>(i);
    return out <= kMaxOffset;
  }
  return false;
}

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint16_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}

// count elements of `dtype` from little-endian bytes into `to` (as floats, or as 16-bit values of
// to.dtype: copied when the file has that format, rounded to nearest even from any other), starting
// at element `first`.
void convert(Dtype dtype, const std::uint8_t* bytes, std::size_t count, const TensorTarget& to, std::int64_t first) {
  const auto element = [&](std::size_t i) {
    return dtype == Dtype::F32 ? bits_to_float(load_u32(bytes + 4 * i)) : widen16(dtype, load_u16(bytes + 2 * i));
  };
  if (to.dtype == Dtype::F32) {
    float* out = static_cast<float*>(to.data) + first;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (dtype == Dtype::F32) {
      if (count > 0) std::memcpy(out, bytes, count * 4);  // the file's byte order is the host's
      return;
    }
#endif
    for (std::size_t i = 0; i < count; ++i) out[i] = element(i);
    return;
  }
  std::uint16_t* out = static_cast<std::uint16_t*>(to.data) + first;
  if (dtype == to.dtype) {
    for (std::size_t i = 0; i < count; ++i) out[i] = load_u16(bytes + 2 * i);
    return;
  }
  for (std::size_t i = 0; i < count; ++i)
    out[i] = to.dtype == Dtype::BF16 ? float_to_bf16(element(i)) : float_to_half(element(i));
}

}  // namespace

SafetensorsReader::SafetensorsReader(std::string file_name, std::uint64_t file_size, Destination destination)
    : file_name_(std::move(file_name)), file_size_(file_size), destination_(std::move(destination)) {}

SafetensorsReader::~SafetensorsReader() = default;

void SafetensorsReader::fail(const std::string& problem) {
  failure_ = file_name_ + ": " + problem;
  throw std::invalid_argument(failure_);
}

void SafetensorsReader::check_failed() const {
  if (!failure_.empty()) throw std::invalid_argument(failure_);
}

void SafetensorsReader::feed(const std::uint8_t* data, std::size_t n) {
  check_failed();
  try {
    if (file_size_ != 0 && n > file_size_ - received_)
      fail("more bytes arrived than the file's size of " + std::to_string(file_size_) + " bytes");
    while (n > 0) {
      if (received_ < 8) {
        const std::size_t take = std::min<std::size_t>(8 - received_, n);
        std::memcpy(length_bytes_ + received_, data, take);
        received_ += take;
        data += take;
        n -= take;
        if (received_ < 8) continue;
        header_length_ = 0;
        for (int i = 7; i >= 0; --i) header_length_ = header_length_ << 8 | length_bytes_[i];
        if (header_length_ > kMaxSafetensorsHeaderBytes)
          fail("the header length is " + std::to_string(header_length_) + " bytes, over the limit of " +
               std::to_string(kMaxSafetensorsHeaderBytes >> 20) + " MiB (not a safetensors file?)");
        if (file_size_ != 0 && 8 + header_length_ > file_size_)
          fail("the header length of " + std::to_string(header_length_) + " bytes reaches past the end of the " +
               std::to_string(file_size_) + "-byte file");
        if (header_length_ == 0) fail("the header is empty (a header length of 0)");
        // Reserved only when the file is known to hold it; otherwise it grows as bytes arrive.
        if (file_size_ != 0) header_.reserve(static_cast<std::size_t>(header_length_));
      } else if (!header_read_) {
        const std::size_t take = static_cast<std::size_t>(
            std::min<std::uint64_t>(header_length_ - header_.size(), n));
        header_.append(reinterpret_cast<const char*>(data), take);
        received_ += take;
        data += take;
        n -= take;
        if (header_.size() == header_length_) parse_header();
      } else {
        feed_data(data, n);
        n = 0;
      }
    }
  } catch (const std::exception& e) {
    if (failure_.empty()) failure_ = e.what();
    throw;
  }
}

void SafetensorsReader::parse_header() {
  if (nesting_depth(header_) > kMaxSafetensorsHeaderDepth)
    fail("the header is not a safetensors header: JSON nested deeper than {name: {shape: [...]}}");
  const nlohmann::json root = nlohmann::json::parse(header_, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) fail("the header is not valid JSON");
  if (!root.is_object()) fail("the header is not a JSON object of tensors");

  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail("__metadata__ is not an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) fail("__metadata__ " + quoted_name(m.key()) + " is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor " + quoted_name(name);
    if (!v.is_object()) fail(what + " is not an object with dtype, shape and data_offsets");
    TensorInfo t;
    t.name = name;
    const auto dtype = v.find("dtype");
    if (dtype == v.end() || !dtype->is_string()) fail(what + " has no dtype");
    if (!dtype_from_name(dtype->get<std::string>(), t.dtype))
      fail(what + " has dtype " + quoted_name(dtype->get<std::string>()) + ": only F32, F16 and BF16 are supported");
    const auto shape = v.find("shape");
    if (shape == v.end() || !shape->is_array()) fail(what + " has no shape (an array of dimensions)");
    std::uint64_t elements = 1;
    for (const nlohmann::json& d : *shape) {
      if (d.is_number_integer() && !d.is_number_unsigned() && d.get<std::int64_t>() < 0)
        fail(what + " has a negative dimension (" + std::to_string(d.get<std::int64_t>()) + ") in its shape");
      std::uint64_t dim = 0;
      if (!read_count(d, dim)) fail(what + " has a shape dimension that is not a whole number below 2^62");
      if (dim != 0 && elements > kMaxOffset / dim) fail(what + " has a shape with too many elements");
      elements *= dim;
      t.shape.push_back(static_cast<std::int64_t>(dim));
    }
    const auto offsets = v.find("data_offsets");
    if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 || !read_count((*offsets)[0], t.begin) ||
        !read_count((*offsets)[1], t.end))
      fail(what + " has no data_offsets [begin, end] of whole, non-negative numbers");
    if (t.end < t.begin) fail(what + " has data_offsets " + range_text(t) + " that end before they begin");
    const std::uint64_t size = dtype_bytes(t.dtype);
    if (elements > kMaxOffset / size || elements * size != t.end - t.begin)
      fail(what + ": shape " + shape_text(t.shape) + " of " + dtype_name(t.dtype) + " needs " +
           (elements > kMaxOffset / size ? std::string("too many") : std::to_string(elements * size)) +
           " bytes but data_offsets " + range_text(t) + " hold " + std::to_string(t.end - t.begin));
    tensors_.push_back(std::move(t));
  }

  // The data section is the tensors back to back, in offset order, from 0: no overlap, no hole.
  std::stable_sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& t = tensors_[i];
    if (t.begin < pos)
      fail("tensor " + quoted_name(t.name) + " (data_offsets " + range_text(t) + ") overlaps tensor " +
           quoted_name(tensors_[i - 1].name) + " (" + range_text(tensors_[i - 1]) + ")");
    if (t.begin > pos)
      fail("bytes " + std::to_string(pos) + " to " + std::to_string(t.begin) +
           " of the data belong to no tensor (a hole before tensor " + quoted_name(t.name) + ")");
    pos = t.end;
  }
  expected_size_ = 8 + header_length_ + pos;
  if (file_size_ != 0 && expected_size_ > file_size_) {
    const std::uint64_t data_size = file_size_ - 8 - header_length_;
    for (const TensorInfo& t : tensors_)
      if (t.end > data_size)
        fail("tensor " + quoted_name(t.name) + " has data_offsets " + range_text(t) +
             " past the end of the data (the file holds " + std::to_string(data_size) + " bytes after the header)");
  }
  if (file_size_ != 0 && expected_size_ < file_size_)
    fail("the file has " + std::to_string(file_size_ - expected_size_) +
         " extra bytes after the last tensor's data (the header describes " + std::to_string(expected_size_) + ")");
  header_read_ = true;
  std::string().swap(header_);

  targets_.reserve(tensors_.size());
  for (const TensorInfo& t : tensors_) targets_.push_back(destination_ ? destination_(t) : TensorTarget{});
}

void SafetensorsReader::feed_data(const std::uint8_t* data, std::size_t n) {
  const std::uint64_t data_size = expected_size_ - 8 - header_length_;
  if (n > data_size - data_pos_)
    fail("extra bytes after the last tensor's data: the header describes a file of " +
         std::to_string(expected_size_) + " bytes");
  received_ += n;
  while (n > 0) {
    const TensorInfo& t = tensors_[current_];
    const std::uint64_t left = t.end - data_pos_;
    if (left == 0) {  // a tensor with no elements, or one just completed
      ++current_;
      element_ = 0;
      continue;
    }
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, n));
    const TensorTarget& target = targets_[current_];
    if (target.data != nullptr) {
      const std::size_t size = dtype_bytes(t.dtype);
      const std::uint8_t* p = data;
      std::size_t k = take;
      if (partial_n_ > 0) {
        const std::size_t c = std::min(size - partial_n_, k);
        std::memcpy(partial_ + partial_n_, p, c);
        partial_n_ += c;
        p += c;
        k -= c;
        if (partial_n_ == size) {
          convert(t.dtype, partial_, 1, target, element_++);
          partial_n_ = 0;
        }
      }
      const std::size_t whole = k / size;
      convert(t.dtype, p, whole, target, element_);
      element_ += static_cast<std::int64_t>(whole);
      p += whole * size;
      k -= whole * size;
      if (k > 0) {  // only when no partial element is pending (an unfinished one left k = 0)
        std::memcpy(partial_, p, k);
        partial_n_ = k;
      }
    }
    data_pos_ += take;
    data += take;
    n -= take;
  }
}

void SafetensorsReader::finish() {
  check_failed();
  try {
    if (received_ < 8)
      fail("the file is truncated: " + std::to_string(received_) +
           " bytes, too short for the 8-byte header length");
    if (!header_read_)
      fail("the file is truncated inside the header (" + std::to_string(header_.size()) + " of " +
           std::to_string(header_length_) + " bytes)");
    if (received_ < expected_size_) {
      std::string in;
      for (const TensorInfo& t : tensors_)
        if (t.end > data_pos_) {
          in = " (inside tensor " + quoted_name(t.name) + ")";
          break;
        }
      fail("the file is truncated: " + std::to_string(received_) + " of the " + std::to_string(expected_size_) +
           " bytes its header describes" + in);
    }
    if (file_size_ != 0 && received_ != file_size_)
      fail(std::to_string(received_) + " bytes arrived of a file announced as " + std::to_string(file_size_));
  } catch (const std::exception& e) {
    if (failure_.empty()) failure_ = e.what();
    throw;
  }
}

// [SECTION] the writer -------------------------------------------------------------------------

void write_safetensors(const ByteSink& out, const std::vector<NamedTensor>& tensors, Dtype dtype,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  std::uint64_t offset = 0;
  const std::size_t size = dtype_bytes(dtype);
  for (const NamedTensor& t : tensors) {
    if (t.name == "__metadata__" || !names.insert(t.name).second)
      throw std::invalid_argument("write_safetensors: tensor name " + quoted_name(t.name) + " is reserved or repeated");
    std::uint64_t elements = 1;
    for (std::int64_t d : t.shape) {
      if (d < 0 || static_cast<std::uint64_t>(d) > kMaxOffset || (d != 0 && elements > kMaxOffset / size / static_cast<std::uint64_t>(d)))
        throw std::invalid_argument("write_safetensors: tensor " + quoted_name(t.name) + " has a bad shape " + shape_text(t.shape));
      elements *= static_cast<std::uint64_t>(d);
    }
    if (elements > 0 && t.data == nullptr)
      throw std::invalid_argument("write_safetensors: tensor " + quoted_name(t.name) + " has no data");
    header[t.name] = {{"dtype", dtype_name(dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + elements * size}}};
    offset += elements * size;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument("write_safetensors: a tensor name or metadata is not valid UTF-8");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(text.size()) >> (8 * i));
  out(reinterpret_cast<const char*>(length), 8);
  out(text.data(), text.size());

  std::vector<std::uint8_t> buffer;
  for (const NamedTensor& t : tensors) {
    std::uint64_t elements = 1;
    for (std::int64_t d : t.shape) elements *= static_cast<std::uint64_t>(d);
    constexpr std::uint64_t kBlock = 1 << 16;
    for (std::uint64_t first = 0; first < elements; first += kBlock) {
      const std::size_t count = static_cast<std::size_t>(std::min(kBlock, elements - first));
      buffer.resize(count * size);
      for (std::size_t i = 0; i < count; ++i) {
        const float v = t.data[first + i];
        std::uint8_t* p = buffer.data() + i * size;
        if (dtype == Dtype::F32) {
          const std::uint32_t bits = float_to_bits(v);
          for (int b = 0; b < 4; ++b) p[b] = static_cast<std::uint8_t>(bits >> (8 * b));
        } else {
          const std::uint16_t bits = dtype == Dtype::F16 ? float_to_half(v) : float_to_bf16(v);
          p[0] = static_cast<std::uint8_t>(bits);
          p[1] = static_cast<std::uint8_t>(bits >> 8);
        }
      }
      out(reinterpret_cast<const char*>(buffer.data()), buffer.size());
    }
  }
}

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors, Dtype dtype,
                              const std::map<std::string, std::string>& metadata) {
  std::string bytes;
  write_safetensors([&](const char* p, std::size_t n) { bytes.append(p, n); }, tensors, dtype, metadata);
  return bytes;
}

void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors, Dtype dtype,
                       const std::map<std::string, std::string>& metadata) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw std::runtime_error(path + ": cannot be written");
  bool ok = true;
  try {
    write_safetensors([&](const char* p, std::size_t n) { ok = ok && std::fwrite(p, 1, n, file) == n; }, tensors, dtype, metadata);
  } catch (...) {
    std::fclose(file);
    throw;
  }
  if (std::fclose(file) != 0 || !ok) throw std::runtime_error(path + ": writing failed (disk full?)");
}

}  // namespace attn
