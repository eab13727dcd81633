// The platform edge of the loaded model's Web Worker (src/app/js_model_worker.cpp), for the model
// loading exports: start it, move a model in once it is loaded, forget a model unloaded.
#pragma once
#include <memory>

#include "../api/model_files.h"

namespace attn::app {
// Starts the worker (web: Module.startModelWorker) unless it runs; false where no Worker can start.
bool start_model_worker();
// A model was loaded: moved into the worker now when it runs, else the worker is started.
void model_worker_model_loaded(const LoadedModel& model);
// The worker's id of the model (moved in first where it has not got it) while the worker runs; 0 where none runs.
int model_worker_id(const LoadedModel& model);
// A model was unloaded or replaced: the worker drops its copy.
void model_worker_forget(const std::shared_ptr<const Transformer>& weights);
}  // namespace attn::app
