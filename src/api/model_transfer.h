// A loaded model's weights and the views' answer as bytes, for the model's Web Worker (the page moves
// the weights into the worker once; the worker sends each answer back). Not a file format: both ends
// are the same build, the header is JSON and the numbers are the tensors' own bytes, in one fixed order.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../core/transformer.h"
#include "model_views.h"

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

// The views' answer (model_views.h) as the worker sends it: its header (JSON text: the ask, the runs'
// ids, summaries and shapes, the predictions, the small numbers) and its numbers (thumbnails, streams,
// the layers' details, the readings' matrices, one after another).
struct PackedTrace {
  std::string header;
  std::vector<float> numbers;
};
// The runs whose inputs did not change from `held` (the ask of the answer the page shows, whose runs it
// keeps; null: it keeps none) are not sent: the header says "held". A run's intervention is not sent
// either (the ask names it; the page never runs the model again on a shown run).
PackedTrace pack_model_views(const ModelViews& views, const ModelViewsAsk* held = nullptr);
// Throws std::invalid_argument when `count` floats at `numbers` are not what the header says, or it names
// a run as held that `held` has not. With `into`: `numbers` is not read (may be null); every matrix is
// allocated, unset, and where its numbers go is appended to `*into` in the order of the packed numbers
// (the page copies the worker's answer straight there: no second copy).
ModelViews unpack_model_views(const std::string& header, const float* numbers, std::size_t count,
                              const ModelViews* held = nullptr, std::vector<TensorDestination>* into = nullptr);

}  // namespace attn
