// libFuzzer target: any bytes as a safetensors file, fed to the streaming reader in pieces whose
// sizes come from the input, with the file size known or not, kept as floats or 16-bit; half the
// runs go through the model assembler (a 1-layer GPT-2 or Qwen 2) instead. Errors only as std::invalid_argument; no other way out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/model_files.h"
#include "../../src/api/safetensors.h"

namespace {

// Feeds `file` in pieces of 1 … max_piece bytes chosen by a small generator seeded from the input.
template <typename Feed>
void feed_in_pieces(const std::uint8_t* file, std::size_t size, std::uint32_t seed, std::size_t max_piece, Feed feed) {
  std::size_t at = 0;
  while (at < size) {
    seed = seed * 1664525u + 1013904223u;
    const std::size_t piece = std::min<std::size_t>(size - at, 1 + (seed >> 8) % max_piece);
    feed(file + at, piece);
    at += piece;
  }
}

void read_plain(const std::uint8_t* file, std::size_t size, bool known, std::uint32_t seed, std::size_t max_piece) {
  std::vector<std::vector<float>> buffers;
  std::vector<std::vector<std::uint16_t>> halves;
  attn::SafetensorsReader reader("model.safetensors", known ? size : 0, [&](const attn::TensorInfo& t) {
    if (t.elements() > (1 << 16) || (seed & 1)) return attn::TensorTarget{};  // skipped: the bytes still pass
    if (seed & 2) {  // kept 16-bit, converted from whatever the file has
      halves.emplace_back(static_cast<std::size_t>(t.elements()));
      return attn::TensorTarget{halves.back().data(), (seed & 4) ? attn::Dtype::BF16 : attn::Dtype::F16};
    }
    buffers.emplace_back(static_cast<std::size_t>(t.elements()));
    return attn::TensorTarget{buffers.back().data(), attn::Dtype::F32};
  });
  feed_in_pieces(file, size, seed, max_piece, [&](const std::uint8_t* p, std::size_t n) { reader.feed(p, n); });
  reader.finish();
  // Accepted: the tensors tile the data exactly.
  std::uint64_t pos = 0;
  for (const attn::TensorInfo& t : reader.tensors()) {
    if (t.begin != pos || t.end < t.begin) std::abort();
    pos = t.end;
  }
  if (reader.expected_size() != size || reader.bytes_received() != size) std::abort();
}

void read_model(const std::uint8_t* file, std::size_t size, bool known, std::uint32_t seed, std::size_t max_piece) {
  attn::ModelAssembler assembler("fuzz");
  // A 1-layer GPT-2, or a 1-layer Llama-style model with two heads sharing one K/V head.
  assembler.add_text_file("config.json",
                          (seed & 8) ? R"({"model_type":"qwen2","hidden_size":4,"intermediate_size":3,"num_hidden_layers":1,)"
                                       R"("num_attention_heads":2,"num_key_value_heads":1,"vocab_size":4})"
                                     : R"({"model_type":"gpt2","n_layer":1,"n_head":1,"n_embd":2,"n_positions":3,"vocab_size":4})");
  assembler.begin_weights("model.safetensors", known ? size : 0);
  feed_in_pieces(file, size, seed, max_piece,
                 [&](const std::uint8_t* p, std::size_t n) { assembler.feed_weights(p, n); });
  assembler.finish();  // no tokenizer: always refused, after the weights are checked
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t mode = data[0];
  const std::uint32_t seed = data[1] * 2654435761u;
  const bool known = mode & 1, model = mode & 2;
  const std::size_t max_piece = 1 + (mode >> 2) * 3;  // 1 … 190 bytes
  try {
    if (model) read_model(data + 2, size - 2, known, seed, max_piece);
    else read_plain(data + 2, size - 2, known, seed, max_piece);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("model.safetensors: ") == std::string::npos &&
        std::string(e.what()).find("tokenizer.json: ") == std::string::npos)
      std::abort();  // every refusal names the file
  }
  return 0;
}
