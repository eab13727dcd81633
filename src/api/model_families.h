// The one place that knows each model family's Hugging Face names: which config.json fields say
// what a block is made of, and which tensor name holds which part of the core's Transformer (for
// reading and for writing). Not the loader (model_files.h streams the files through this) and not
// the maths (src/core/transformer.h knows no family).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../core/transformer.h"

namespace attn {

// What config.json says: the core's configuration and how the family stores its matrices.
struct ModelConfigFile {
  TransformerConfig config;
  WeightLayout layout = WeightLayout::OutIn;
  bool tied_head = true;        // tie_word_embeddings: the LM head is the embedding (else lm_head.weight)
  std::string wrapper;          // "" or what the text model sits inside ("gemma3": a vision-language model)
};

// The families config.json's model_type may name (in the order the README lists them).
const std::vector<std::string>& supported_model_types();

// config.json → ModelConfigFile. Every other model_type, and every option that changes the
// architecture beyond what the core does (mixture of experts, partial rotary, ALiBi, a rope_scaling
// type not listed, ...), is refused: std::invalid_argument("<file>: <field> <value> ...").
ModelConfigFile parse_model_config(const std::string& text, const std::string& file_name = "config.json");

// One tensor of a model file: its name in the family's table (no prefix), its shape as stored, and
// where its values live in a Transformer (a run of rows of a matrix, or a stretch of a vector).
struct TensorSlot {
  std::string name;
  std::vector<std::int64_t> shape;
  void* data = nullptr;           // the first element
  Dtype dtype = Dtype::F32;       // how the Transformer holds it (vectors: always F32)
  bool optional = false;          // may be absent (a tied lm_head)
};

// The names the loader asks for by role: the LM head's (the same in every family, and never
// prefixed: it sits beside the base model) and the token embedding's in `model_type`'s table.
extern const char kHeadTensor[];
std::string embedding_tensor(const std::string& model_type);
// The LM head's own weight (a decoder's lm_head.weight; an encoder's masked-LM decoder:
// cls.predictions.decoder.weight, vocab_projector.weight, lm_head.decoder.weight), optional when tied.
std::string head_tensor(const std::string& model_type);
// Whether a name (prefix removed) is part of the LM head, which sits beside the base model unprefixed
// (lm_head.weight; an encoder's masked-LM head: cls.predictions.*, vocab_*, lm_head.*).
bool family_head_part(const std::string& model_type, const std::string& name);
// The table's name for a name some files use instead (prefix removed): an encoder's decoder bias
// (cls.predictions.decoder.bias, lm_head.decoder.bias: tied to the head's bias) and older LayerNorm
// gamma / beta; other names as they are.
std::string family_alias(const std::string& model_type, const std::string& name);
// Every tensor of `model`'s family, in the family's file order. `lm_head`: include the head's slot
// (points at model.lm_head, which the caller allocates when the file has one; or at the embedding
// when writing a tied head). An encoder's masked-LM head's transform and bias are in the table when
// its config has them (has_lm_head).
std::vector<TensorSlot> family_tensors(Transformer& model, bool lm_head);
// The prefixes files put before the table's names ("transformer." for GPT-2 from GPT2LMHeadModel,
// "model." for Llama-style models, the wrapper's for Gemma 3), longest first.
const std::vector<std::string>& family_prefixes(const std::string& model_type);
// Tensors a family's files carry that the text model does not use (GPT-2's mask buffers, a
// vision tower): true when the name (as in the file) is one of them.
bool family_ignores_tensor(const std::string& model_type, const std::string& file_name);
// The tensor name the table would give `name` after its prefix is removed ("" when no prefix fits
// and it is not in the table's form).
std::string strip_family_prefix(const std::string& model_type, const std::string& name);

// config.json's text for a configuration (GPT-2's names; the trainer's models and the tests').
std::string model_config_json(const TransformerConfig& config);

}  // namespace attn
