// The model worker's transfer (src/api/model_transfer.h): a model's header and tensors rebuilt on the
// other side equal the original (config and every tensor, F32 and BF16, GPT-2 and Llama shapes), its
// forward gives the same numbers bit for bit, and a trace packed and unpacked is the same trace.
#include <doctest/doctest.h>

#include <cstring>

#include "../../src/api/model_transfer.h"
#include "test_helpers.h"

namespace {

attn::Transformer moved(const attn::Transformer& original) {
  std::unique_ptr<attn::Transformer> copy = attn::transformer_from_header(attn::transformer_header(original));
  const std::vector<attn::TensorBytes> from = attn::transformer_tensors(original);
  const std::vector<attn::TensorDestination> to = attn::transformer_slots(*copy);
  REQUIRE(from.size() == to.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    REQUIRE(from[i].bytes == to[i].bytes);
    if (from[i].bytes) std::memcpy(to[i].data, from[i].data, from[i].bytes);
  }
  return std::move(*copy);
}

void check_same_model(const attn::Transformer& a, const attn::Transformer& b) {
  CHECK(a.config == b.config);
  CHECK(a.embed == b.embed);
  CHECK(a.position_table == b.position_table);
  REQUIRE(a.blocks.size() == b.blocks.size());
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    CHECK(a.blocks[l].qkv == b.blocks[l].qkv);
    CHECK(a.blocks[l].o == b.blocks[l].o);
    CHECK(a.blocks[l].up == b.blocks[l].up);
    CHECK(a.blocks[l].down == b.blocks[l].down);
    CHECK(a.blocks[l].attn_norm_w == b.blocks[l].attn_norm_w);
    CHECK(a.blocks[l].qkv_b.size() == b.blocks[l].qkv_b.size());
  }
  CHECK(a.lm_head == b.lm_head);
  CHECK(a.weight_bytes() == b.weight_bytes());
}

}  // namespace

TEST_CASE("model transfer: GPT-2 (F32) and Llama (BF16) rebuilt equal, the same forward bit for bit") {
  const std::vector<int> ids = {3, 1, 4, 1, 5, 9, 2};
  struct Case {
    attn::TransformerConfig config;
    attn::Dtype dtype;
    attn::WeightLayout layout;
  };
  for (const Case& c : {Case{attn::gpt2_config(2, 3, 12, 16, 23), attn::Dtype::F32, attn::WeightLayout::InOut},
                        Case{attn::test::tiny_llama(2, 4, 2, 4, 12), attn::Dtype::BF16, attn::WeightLayout::OutIn}}) {
    INFO(c.config.family);
    const attn::Transformer original = attn::random_transformer(c.config, 7, c.dtype, c.layout);
    const attn::Transformer copy = moved(original);
    check_same_model(original, copy);
    const attn::ModelTrace a = attn::transformer_forward(original, ids), b = attn::transformer_forward(copy, ids);
    CHECK((a.final_normed.array() == b.final_normed.array()).all());
    REQUIRE(a.next.size() == b.next.size());
    CHECK(a.next.back().front().id == b.next.back().front().id);
    CHECK(a.next.back().front().p == b.next.back().front().p);
  }
}

TEST_CASE("model transfer: a bad header is refused with a message") {
  CHECK_THROWS_WITH_AS(attn::transformer_from_header("{}"), doctest::Contains("model: a bad header"), std::invalid_argument);
  CHECK_THROWS_AS(attn::transformer_from_header("not json"), std::invalid_argument);
}

TEST_CASE("views transfer: a run packed and unpacked is the same run; too few numbers are refused") {
  const attn::Transformer model = attn::random_transformer(attn::test::tiny_llama(3, 4, 2, 4, 12), 3);
  attn::ForwardOptions options;
  options.stream_bytes = 1;  // one layer's stream at least: stream_every > 1
  options.predict_from = 4;
  const attn::ModelTrace trace = attn::transformer_forward(model, {1, 2, 3, 4, 5, 6}, options);
  attn::ModelViews views;  // (an answer with its text's run alone)
  views.base = std::make_shared<const attn::ModelTrace>(trace);
  const attn::PackedTrace packed = attn::pack_model_views(views);
  const attn::ModelTrace back = *attn::unpack_model_views(packed.header, packed.numbers.data(), packed.numbers.size()).base;
  CHECK(back.token_ids == trace.token_ids);
  CHECK(back.stream_every == trace.stream_every);
  REQUIRE(back.streams.size() == trace.streams.size());
  for (std::size_t s = 0; s < trace.streams.size(); ++s) CHECK((back.streams[s].array() == trace.streams[s].array()).all());
  CHECK((back.final_normed.array() == trace.final_normed.array()).all());
  REQUIRE(back.layers.size() == trace.layers.size());
  for (std::size_t l = 0; l < trace.layers.size(); ++l)
    for (std::size_t h = 0; h < trace.layers[l].summaries.size(); ++h) {
      CHECK(back.layers[l].summaries[h].pattern == trace.layers[l].summaries[h].pattern);
      CHECK(back.layers[l].summaries[h].spread == trace.layers[l].summaries[h].spread);
      CHECK((back.layers[l].thumbnails[h].array() == trace.layers[l].thumbnails[h].array()).all());
    }
  REQUIRE(back.next.size() == trace.next.size());
  CHECK(back.next[5].front().id == trace.next[5].front().id);
  CHECK(back.next[5].front().p == trace.next[5].front().p);
  CHECK(back.next[0].empty());
  // the views read a layer in full from the streams: the same numbers from the unpacked trace
  const attn::LayerDetail a = attn::layer_detail(model, trace, 2), b = attn::layer_detail(model, back, 2);
  CHECK((a.weights[1].array() == b.weights[1].array()).all());
  CHECK_THROWS_WITH_AS(attn::unpack_model_views(packed.header, packed.numbers.data(), packed.numbers.size() - 1),
                       doctest::Contains("fewer numbers"), std::invalid_argument);
  // as the page receives it: the matrices made first, the numbers then copied into them in order
  std::vector<attn::TensorDestination> into;
  const attn::ModelViews got = attn::unpack_model_views(packed.header, nullptr, packed.numbers.size(), nullptr, &into);
  const attn::ModelTrace& filled = *got.base;
  std::size_t at = 0;
  for (const attn::TensorDestination& d : into) {
    REQUIRE(at * sizeof(float) + d.bytes <= packed.numbers.size() * sizeof(float));
    if (d.bytes) std::memcpy(d.data, packed.numbers.data() + at, d.bytes);
    at += d.bytes / sizeof(float);
  }
  CHECK(at == packed.numbers.size());
  for (std::size_t s = 0; s < trace.streams.size(); ++s) CHECK((filled.streams[s].array() == trace.streams[s].array()).all());
  CHECK((filled.final_normed.array() == trace.final_normed.array()).all());
  for (std::size_t l = 0; l < trace.layers.size(); ++l)
    for (std::size_t h = 0; h < trace.layers[l].thumbnails.size(); ++h)
      CHECK((filled.layers[l].thumbnails[h].array() == trace.layers[l].thumbnails[h].array()).all());
  into.clear();
  CHECK_THROWS_WITH_AS(attn::unpack_model_views(packed.header, nullptr, packed.numbers.size() + 1, nullptr, &into),
                       doctest::Contains("more numbers"), std::invalid_argument);
}
