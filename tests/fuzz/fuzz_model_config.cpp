// libFuzzer target: any bytes as config.json (every family's fields) or as a sharded checkpoint's
// model.safetensors.index.json after a good config. Errors only as std::invalid_argument naming the
// file; an accepted config is inside the core's limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../../src/api/model_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool index = data[0] & 1;
  const char* file = index ? "model.safetensors.index.json" : "config.json";
  try {
    if (!index) {
      const attn::ModelConfigFile c = attn::parse_model_config(text, file);
      attn::validate_config(c.config, "accepted");  // what is accepted is inside the limits
      if (attn::transformer_weight_bytes(c.config, attn::Dtype::BF16) == 0) std::abort();
    } else {
      attn::ModelAssembler a("fuzz");
      a.add_text_file("config.json", R"({"model_type":"llama","hidden_size":4,"intermediate_size":3,)"
                                     R"("num_hidden_layers":1,"num_attention_heads":2,"vocab_size":4})");
      a.add_text_file(file, text);
      for (const std::string& shard : a.shards()) a.begin_weights(shard, 8);  // each refused or begun, by name
      a.finish();
    }
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.find(": ") == std::string::npos || what.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
