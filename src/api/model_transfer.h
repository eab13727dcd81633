// A loaded model's weights and a forward's trace as bytes, for the model's Web Worker (the page moves
// the weights into the worker once; the worker sends each trace back). Not a file format: both ends
// are the same build, the header is JSON and the numbers are the tensors' own bytes, in one fixed order.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../core/attribution.h"
#include "../core/transformer.h"

namespace attn {

// One tensor's bytes as the model holds them (Weights in their dtype, norm vectors as floats).
struct TensorBytes {
  const void* data = nullptr;
  std::size_t bytes = 0;
};
struct TensorDestination {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// The config and every tensor's dtype and shape, as JSON text; the tensors' bytes in the same order.
std::string transformer_header(const Transformer& model);
std::vector<TensorBytes> transformer_tensors(const Transformer& model);
// The receiving end: a model with every tensor allocated as the header says (zeros), and where each
// tensor's bytes go, in transformer_tensors' order. Throws std::invalid_argument for a bad header.
std::unique_ptr<Transformer> transformer_from_header(const std::string& header);
std::vector<TensorDestination> transformer_slots(Transformer& model);

// A trace without an intervention (what the worker computes): its header (JSON text: ids, summaries,
// shapes, next tokens) and its numbers (thumbnails, streams, final_normed, one after another).
struct PackedTrace {
  std::string header;
  std::vector<float> numbers;
};
// What the views read beside a trace for the shown layer and token, computed with it (in the model's
// worker, so the page's main thread need not): that layer's detail, the predictions at a position and, for
// the Heads view, the attribution of the likeliest one's logit to every head. Parts not asked stay empty.
struct ForwardExtrasAsk {
  int layer = -1;            // the layer whose LayerDetail the views draw (−1: none)
  int position = -1;         // where the next-token strip predicts (−1: nowhere)
  int top = 0;               // how many predictions there
  bool attribution = false;  // the Heads view's attribution of the first prediction (where the model allows one)
};
struct ForwardExtras {
  int layer = -1;
  std::shared_ptr<const LayerDetail> detail;
  int position = -1;
  std::vector<NextToken> next;
  std::shared_ptr<const LogitAttribution> attribution;
};
// The extras of `trace` by `model` as apply_inputs computes them (layer_detail, next_tokens_at, attribute_logit).
// `cache` (the worker's, when it holds this trace's text): the attribution reads each layer's row from its
// keys and values (one row per layer, not every layer again; the same numbers to float rounding).
ForwardExtras forward_extras(const Transformer& model, const ModelTrace& trace, const ForwardExtrasAsk& ask,
                             const ForwardCache* cache = nullptr);

// `extras` (when given) travel in the same header and numbers.
PackedTrace pack_trace(const ModelTrace& trace, const ForwardExtras* extras = nullptr);
// Throws std::invalid_argument when `count` floats at `numbers` are not what the header says. The extras
// (when the header has them) go to `*extras` where given. With `into`: `numbers` is not read (may be
// null); every matrix is allocated, unset, and where its numbers go is appended to `*into` in the
// order of the packed numbers (the page copies the worker's answer straight there: no second copy).
ModelTrace unpack_trace(const std::string& header, const float* numbers, std::size_t count, ForwardExtras* extras = nullptr,
                        std::vector<TensorDestination>* into = nullptr);

}  // namespace attn
