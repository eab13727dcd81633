// The safetensors reader and writer: the number conversions on hand-picked values, round trips in
// every dtype and every chunking, and a table of hostile files each refused with its own message.
// Not the model loader's tests (test_model_files.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/safetensors.h"

namespace {

using Floats = std::map<std::string, std::vector<float>>;

// A file from a header text and data bytes: the 8-byte little-endian length first.
std::string raw_file(const std::string& header, const std::string& data, std::uint64_t length_override = ~0ull) {
  const std::uint64_t length = length_override == ~0ull ? header.size() : length_override;
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>(length >> (8 * i));
  return out + header + data;
}

// Reads every tensor of `file`, fed `chunk` bytes at a time; file_size 0 when `known_size` is false.
Floats read_all(const std::string& file, std::size_t chunk, bool known_size = true) {
  Floats values;
  attn::SafetensorsReader reader("model.safetensors", known_size ? file.size() : 0, [&](const attn::TensorInfo& t) {
    std::vector<float>& v = values[t.name];
    v.assign(static_cast<std::size_t>(t.elements()), std::nanf("7"));
    return attn::TensorTarget{v.data(), attn::Dtype::F32};
  });
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
  for (std::size_t i = 0; i < file.size(); i += chunk) reader.feed(bytes + i, std::min(chunk, file.size() - i));
  reader.finish();
  return values;
}

// The message a file is refused with ("" when it is accepted).
std::string safetensors_refusal(const std::string& file, std::size_t chunk = 7, bool known_size = true) {
  try {
    read_all(file, chunk, known_size);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string written(const std::vector<attn::NamedTensor>& tensors, attn::Dtype dtype,
                    const std::map<std::string, std::string>& metadata = {}) {
  return attn::safetensors_bytes(tensors, dtype, metadata);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("safetensors: half and bfloat16 bits to float, exactly") {
  CHECK(attn::half_to_float(0x3c00) == 1.0f);
  CHECK(attn::half_to_float(0x7bff) == 65504.0f);                 // the largest half
  CHECK(attn::half_to_float(0x0400) == std::ldexp(1.0f, -14));    // the smallest normal
  CHECK(attn::half_to_float(0x0001) == std::ldexp(1.0f, -24));    // the smallest subnormal
  CHECK(attn::half_to_float(0x03ff) == std::ldexp(1023.0f, -24)); // the largest subnormal
  CHECK(attn::half_to_float(0xc100) == -2.5f);
  CHECK(same_bits(attn::half_to_float(0x8000), -0.0f));
  CHECK(attn::half_to_float(0x7c00) == kInf);
  CHECK(attn::half_to_float(0xfc00) == -kInf);
  CHECK(std::isnan(attn::half_to_float(0x7e00)));
  CHECK(std::isnan(attn::half_to_float(0x7c01)));  // a signalling NaN is still a NaN, not inf
  CHECK(attn::bf16_to_float(0x3f80) == 1.0f);
  CHECK(attn::bf16_to_float(0xc020) == -2.5f);
  CHECK(attn::bf16_to_float(0x0001) == std::ldexp(1.0f, -133));  // a float subnormal
  CHECK(attn::bf16_to_float(0xff80) == -kInf);
  CHECK(std::isnan(attn::bf16_to_float(0x7fc0)));
}

TEST_CASE("safetensors: float to half and bfloat16 round to nearest, ties to even") {
  CHECK(attn::float_to_half(1.0f) == 0x3c00);
  CHECK(attn::float_to_half(65504.0f) == 0x7bff);
  CHECK(attn::float_to_half(65519.0f) == 0x7bff);  // below the halfway point 65520
  CHECK(attn::float_to_half(65520.0f) == 0x7c00);  // the tie rounds to even: infinity
  CHECK(attn::float_to_half(1e-8f) == 0x0000);     // under half the smallest subnormal (2^-25)
  CHECK(attn::float_to_half(3e-8f) == 0x0001);     // just over 2^-25: the smallest subnormal
  CHECK(attn::float_to_half(std::ldexp(1.0f, -25)) == 0x0000);        // a tie: to even (0)
  CHECK(attn::float_to_half(std::ldexp(3.0f, -25)) == 0x0002);        // a tie: to even (2)
  CHECK(attn::float_to_half(6e-5f) == 0x03ef);     // a subnormal half: 1006.6 units → 1007
  CHECK(attn::float_to_half(std::ldexp(2047.0f, -25)) == 0x0400);     // rounds up into the normals
  CHECK(attn::float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00); // tie, even mantissa stays
  CHECK(attn::float_to_half(1.0f + std::ldexp(3.0f, -11)) == 0x3c02); // tie, odd mantissa goes up
  CHECK(attn::float_to_half(-0.0f) == 0x8000);
  CHECK(attn::float_to_half(-kInf) == 0xfc00);
  CHECK(attn::float_to_half(1e30f) == 0x7c00);
  CHECK(std::isnan(attn::half_to_float(attn::float_to_half(std::nanf("")))));
  CHECK(attn::float_to_half(1.0f / 3.0f) == 0x3555);

  CHECK(attn::float_to_bf16(1.0f) == 0x3f80);
  CHECK(attn::float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // tie, even stays
  CHECK(attn::float_to_bf16(1.0f + std::ldexp(3.0f, -8)) == 0x3f82);  // tie, odd goes up
  CHECK(attn::float_to_bf16(65504.0f) == 0x4780);                     // 65536
  CHECK(attn::float_to_bf16(1.0f / 3.0f) == 0x3eab);
  CHECK(attn::float_to_bf16(3.4e38f) == 0x7f80);                      // past the largest: inf
  CHECK(attn::float_to_bf16(-0.0f) == 0x8000);
  CHECK(std::isnan(attn::bf16_to_float(attn::float_to_bf16(-std::nanf("")))));
  // Every half survives half → float → half.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) continue;  // NaNs: checked above
    REQUIRE(attn::float_to_half(attn::half_to_float(static_cast<std::uint16_t>(h))) == h);
  }
}

TEST_CASE("safetensors: written and read back in every dtype and every chunking") {
  const float values[] = {1.0f, -2.5f, 65504.0f, 1e-8f, -0.0f, kInf, 1.0f / 3.0f, 6e-5f, 1e-7f, 3e-8f};
  // Written out by hand (PyTorch's .to(float16 / bfloat16) agrees).
  const float as_f16[] = {1.0f, -2.5f, 65504.0f, 0.0f, -0.0f, kInf, 0.333251953125f, 6.002187728881836e-05f,
                          1.1920928955078125e-07f, 5.960464477539063e-08f};
  const float as_bf16[] = {1.0f, -2.5f, 65536.0f, 1.0011717677116394e-08f, -0.0f, kInf, 0.333984375f,
                           6.008148193359375e-05f, 1.0011717677116394e-07f, 3.003515303134918e-08f};
  const float matrix[] = {0.5f, -1.0f, 2.0f, 4.0f, -8.0f, 0.25f};  // (3, 2)
  const std::vector<attn::NamedTensor> tensors = {
      {"values", {10}, values}, {"empty", {0, 5}, nullptr}, {"matrix", {3, 2}, matrix}, {"scalar", {}, values + 1}};
  for (attn::Dtype dtype : {attn::Dtype::F32, attn::Dtype::F16, attn::Dtype::BF16}) {
    const std::string dtype_text = attn::dtype_name(dtype);
    CAPTURE(dtype_text);
    const std::string file = written(tensors, dtype, {{"format", "pt"}});
    CHECK((file.size() - 8) % 8 == (10 + 6 + 1) * attn::dtype_bytes(dtype) % 8);  // header padded to 8
    const Floats whole = read_all(file, file.size());
    REQUIRE(whole.size() == 4);
    CHECK(whole.at("empty").empty());
    REQUIRE(whole.at("values").size() == 10);
    const float* expected = dtype == attn::Dtype::F32 ? values : dtype == attn::Dtype::F16 ? as_f16 : as_bf16;
    for (int i = 0; i < 10; ++i) {
      CAPTURE(i);
      CHECK(same_bits(whole.at("values")[static_cast<std::size_t>(i)], expected[i]));
    }
    for (int i = 0; i < 6; ++i) CHECK(whole.at("matrix")[static_cast<std::size_t>(i)] == matrix[i]);
    CHECK(whole.at("scalar") == std::vector<float>{-2.5f});
    for (std::size_t chunk : {1, 3, 7, 4096}) {
      for (bool known : {true, false}) {
        CAPTURE(chunk);
        CAPTURE(known);
        const Floats pieces = read_all(file, chunk, known);
        REQUIRE(pieces.size() == whole.size());
        for (const auto& [name, v] : whole) {
          REQUIRE(pieces.at(name).size() == v.size());
          CHECK((v.empty() || std::memcmp(pieces.at(name).data(), v.data(), v.size() * 4) == 0));
        }
      }
    }
  }
}

TEST_CASE("safetensors: the header's facts, metadata, and tensors skipped by a null destination") {
  const float a[] = {1, 2, 3};
  const float b[] = {4, 5};
  const std::string file = written({{"b", {2}, b}, {"a", {3}, a}}, attn::Dtype::F16, {{"format", "pt"}, {"note", "x"}});
  std::vector<float> got_a(3, -1.0f);
  std::vector<std::string> asked;
  attn::SafetensorsReader reader("w.safetensors", file.size(), [&](const attn::TensorInfo& t) {
    asked.push_back(t.name);
    return t.name == "a" ? attn::TensorTarget{got_a.data(), attn::Dtype::F32} : attn::TensorTarget{};
  });
  reader.feed(reinterpret_cast<const std::uint8_t*>(file.data()), 9);
  CHECK_FALSE(reader.header_read());
  reader.feed(reinterpret_cast<const std::uint8_t*>(file.data()) + 9, file.size() - 9);
  reader.finish();
  CHECK(asked == std::vector<std::string>{"b", "a"});  // in the order of the data
  REQUIRE(reader.tensors().size() == 2);
  CHECK(reader.tensors()[0].name == "b");
  CHECK(reader.tensors()[1].begin == 4);
  CHECK(reader.tensors()[1].end == 10);
  CHECK(reader.tensors()[1].dtype == attn::Dtype::F16);
  CHECK(reader.metadata().at("note") == "x");
  CHECK(reader.expected_size() == file.size());
  CHECK(reader.bytes_received() == file.size());
  CHECK(got_a == std::vector<float>{1, 2, 3});
}

TEST_CASE("safetensors: hostile files are refused, each with its own message") {
  const std::string f32x2 = R"("dtype":"F32","shape":[2])";
  const std::string eight(8, '\0');
  struct Case {
    const char* what;
    std::string file;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"header length past the end", raw_file("{}", "", 1000), "header length of 1000 bytes reaches past the end"},
      {"100 MB header", raw_file("{}", "", 100000000), "header length is 100000000 bytes, over the limit of 16 MiB"},
      {"empty header", raw_file("", ""), "the header is empty"},
      {"header not JSON", raw_file("{\"a\": nope}", ""), "the header is not valid JSON"},
      {"header not UTF-8", raw_file("{\"\xff\":{}}", ""), "the header is not valid JSON"},
      {"header not an object", raw_file("[1, 2]", ""), "the header is not a JSON object"},
      {"header nested deep", raw_file(std::string(50, '[') + std::string(50, ']'), ""), "nested deeper"},
      {"tensor not an object", raw_file(R"({"a": 3})", ""), "tensor \"a\" is not an object"},
      {"no dtype", raw_file(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", eight), "tensor \"a\" has no dtype"},
      {"unknown dtype", raw_file(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", eight),
       "tensor \"a\" has dtype \"I64\": only F32, F16 and BF16 are supported"},
      {"negative dims", raw_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "tensor \"a\" has a negative dimension (-2)"},
      {"fractional dims", raw_file(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", eight),
       "shape dimension that is not a whole number"},
      {"shape overflow", raw_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", eight),
       "a shape with too many elements"},
      {"no offsets", raw_file(R"({"a":{)" + f32x2 + "}}", eight), "tensor \"a\" has no data_offsets"},
      {"offsets backwards", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[8,0]}})", eight),
       "data_offsets [8, 0] that end before they begin"},
      {"shape x dtype != bytes", raw_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
       "tensor \"a\": shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"},
      {"offsets outside the data", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]}})", "1234"),
       "tensor \"a\" has data_offsets [0, 8] past the end of the data (the file holds 4 bytes after the header)"},
      {"overlapping", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]},"b":{)" + f32x2 + R"(,"data_offsets":[4,12]}})",
                               eight + "1234"),
       "tensor \"b\" (data_offsets [4, 12]) overlaps tensor \"a\" ([0, 8])"},
      {"holes", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]},"b":{)" + f32x2 + R"(,"data_offsets":[12,20]}})",
                         eight + "1234" + eight),
       "bytes 8 to 12 of the data belong to no tensor (a hole before tensor \"b\")"},
      {"data not from 0", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[4,12]}})", "1234" + eight),
       "bytes 0 to 4 of the data belong to no tensor"},
      {"extra bytes", raw_file(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]}})", eight + "xyz"),
       "the file has 3 extra bytes after the last tensor's data"},
      {"metadata not strings", raw_file(R"({"__metadata__":{"format":1}})", ""), "__metadata__ \"format\" is not a string"},
      {"name with control bytes", raw_file("{\"a\\u0001\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", "x"),
       "tensor \"a\\x01\" has dtype \"U8\""},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const std::string message = safetensors_refusal(c.file);
    CAPTURE(message);
    CHECK(message.rfind("model.safetensors: ", 0) == 0);
    CHECK(message.find(c.message) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    // The same file of unknown size, fed byte by byte, is refused too (perhaps only at finish()).
    CHECK(safetensors_refusal(c.file, 1, false).rfind("model.safetensors: ", 0) == 0);
  }
}

TEST_CASE("safetensors: short and long files of unknown size are refused when it shows") {
  const float v[] = {1, 2, 3, 4};
  const std::string file = written({{"v", {4}, v}}, attn::Dtype::F32);
  CHECK(safetensors_refusal(file.substr(0, 5), 1, false).find("truncated: 5 bytes, too short for the 8-byte header length") !=
        std::string::npos);
  CHECK(safetensors_refusal(file.substr(0, 12), 3, false).find("truncated inside the header (4 of") != std::string::npos);
  const std::string cut = safetensors_refusal(file.substr(0, file.size() - 3), 7, false);
  CHECK(cut.find("the file is truncated: " + std::to_string(file.size() - 3) + " of the " +
                 std::to_string(file.size()) + " bytes its header describes (inside tensor \"v\")") != std::string::npos);
  CHECK(safetensors_refusal(file + "!", 4096, false).find("extra bytes after the last tensor's data") != std::string::npos);
  // A known size that disagrees with what arrives.
  attn::SafetensorsReader reader("model.safetensors", file.size() + 1, nullptr);
  CHECK_THROWS_WITH_AS(reader.feed(reinterpret_cast<const std::uint8_t*>(file.data()), file.size()),
                       doctest::Contains("the file has 1 extra bytes"), std::invalid_argument);
}

TEST_CASE("safetensors: once refused, the reader stays refused") {
  const float v[] = {1, 2};
  const std::string file = written({{"v", {2}, v}}, attn::Dtype::F32);
  attn::SafetensorsReader reader("model.safetensors", 0, [](const attn::TensorInfo& t) -> attn::TensorTarget {
    throw std::invalid_argument("model.safetensors: tensor " + t.name + " is not wanted");
  });
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
  CHECK_THROWS_WITH_AS(reader.feed(bytes, file.size() - 1), "model.safetensors: tensor v is not wanted",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reader.feed(bytes + file.size() - 1, 1), "model.safetensors: tensor v is not wanted",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reader.finish(), "model.safetensors: tensor v is not wanted", std::invalid_argument);
}

TEST_CASE("safetensors: the writer refuses what it cannot write") {
  const float v[] = {1};
  CHECK_THROWS_WITH_AS(written({{"a", {1}, v}, {"a", {1}, v}}, attn::Dtype::F32), doctest::Contains("repeated"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(written({{"__metadata__", {1}, v}}, attn::Dtype::F32), doctest::Contains("reserved"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(written({{"a", {-1}, v}}, attn::Dtype::F32), doctest::Contains("bad shape [-1]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(written({{"a", {2}, nullptr}}, attn::Dtype::F32), doctest::Contains("has no data"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(written({{"\xff", {1}, v}}, attn::Dtype::F32), doctest::Contains("not valid UTF-8"),
                       std::invalid_argument);
}

TEST_CASE("safetensors: tensors kept 16-bit: the file's own bits, or rounded from another format") {
  // 1 + 2^-9 is exact in F16 (10 mantissa bits) but not in BF16 (7): BF16 rounds it to 1 (ties to
  // even), F32 keeps it; 3.140625 = 3 + 9/64 is exact in both.
  const float v[] = {1.0f + 1.0f / 512, 3.140625f, -2.0f};
  for (attn::Dtype file_dtype : {attn::Dtype::F32, attn::Dtype::F16, attn::Dtype::BF16})
    for (attn::Dtype held : {attn::Dtype::F16, attn::Dtype::BF16}) {
      const std::string file = written({{"v", {3}, v}}, file_dtype);
      std::vector<std::uint16_t> got(3, 0xffff);
      for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{4096}}) {
        attn::SafetensorsReader reader("model.safetensors", file.size(), [&](const attn::TensorInfo&) {
          return attn::TensorTarget{got.data(), held};
        });
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
        for (std::size_t i = 0; i < file.size(); i += chunk) reader.feed(bytes + i, std::min(chunk, file.size() - i));
        reader.finish();
        CAPTURE(attn::dtype_name(file_dtype));
        CAPTURE(attn::dtype_name(held));
        const float first = attn::widen16(held, got[0]);
        // Through BF16 anywhere the 2^-9 is gone; F32 or F16 into F16 keeps it.
        const bool keeps = held == attn::Dtype::F16 && file_dtype != attn::Dtype::BF16;
        CHECK(first == (keeps ? 1.0f + 1.0f / 512 : 1.0f));
        CHECK(attn::widen16(held, got[1]) == 3.140625f);
        CHECK(attn::widen16(held, got[2]) == -2.0f);
        CHECK(got[2] == 0xc000);  // −2 has the same bits in both formats
      }
    }
}
