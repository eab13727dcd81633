// The loaded model's Web Worker: loads the forward's own wasm (src/worker/model_worker.cpp), holds the
// models the page moves in, and computes what the views read of the model (the shown text's forward,
// incrementally: a longer text computes its new rows; the shown layer, the predictions, the interventions,
// Compare's second text) and modelTrace's numbers, so the page's main thread never waits for them. Messages:
// the page → {type: "load", flavour, wasmSuffix} once; {type: "model-begin", id, header, sizes: [bytes of
// each tensor]}, then {type: "model-piece", id, segments, buffer} until every byte came; {type: "tokenizer",
// id, name, files: {file name: text}} (intervene reads tokens); {type: "drop", id};
// {type: "views", seq, model, ask, held?} (only the latest waiting one is computed); {type: "trace", seq,
// model, ids, top, padding}; {type: "intervene", seq, model, request}; {type: "sweep", slot, seq, model, over, ids, source_ids?, position, target, resume?}
// (a sweep, a slice at a time; another one for the slot replaces it); {type: "sweep-stop", slot}; {type:
// "bench", model, ids, reps} (tests/bench). The worker → {type: "ready"} | {type: "failed", why} | {type:
// "model", id, error?} (every piece in) | {type: "model-buffer", buffer} (a piece's buffer back) | {type:
// "views", seq, header, numbers, ms, views_ms, recomputed_from} or {..., error} | {type: "trace", seq,
// result} or {..., error} | {type: "intervene", seq, result} or {..., error} | {type: "sweep", slot, seq, done, total, values, baseline, source} after each slice,
// or {..., error} | {type: "bench", result}.
"use strict";
importScripts("worker_wasm.js");  // loadWorkerWasm

let ready = false;
const queue = [];  // messages that came before the wasm was ready
let latestViews = null;  // the newest answer asked for: older ones waiting are for inputs since changed

function call(name, ret, types, args) {
  return Module.ccall(name, ret, types, args);
}

function onHeap(text, fn) {  // a request on the heap, not ccall's small stack (ids of long texts)
  const size = Module.lengthBytesUTF8(text) + 1;
  const pointer = Module._malloc(size);
  try {
    Module.stringToUTF8(text, pointer, size);
    return JSON.parse(fn(pointer));
  } finally {
    Module._free(pointer);
  }
}

// The model whose pieces are arriving: {id, sizes, left: bytes still to come, waiting: messages for it}.
let arriving = null;

function modelFailed(id, error) {
  if (arriving && arriving.id === id) dropArriving();
  postMessage({ type: "model", id, error });
}

function beginModel({ id, header, sizes }) {
  if (arriving) dropArriving();  // a model the page stopped sending
  const begun = onHeap(header, (p) => call("mw_model_begin", "string", ["number", "number"], [id, p]));
  if (begun.error) return postMessage({ type: "model", id, error: begun.error });
  if (begun.tensors.length !== sizes.length || begun.tensors.some((bytes, i) => bytes !== sizes[i]))
    return postMessage({ type: "model", id, error: "the page's tensors are not the ones its header describes" });
  arriving = { id, sizes, left: sizes.reduce((a, b) => a + b, 0), waiting: [] };
  if (!arriving.left) finishModel();
}

// A piece: [tensor, its byte offset, where in the buffer, bytes] segments; the buffer goes back to be filled again.
function modelPiece({ id, segments, buffer }) {
  try {
    if (!arriving || arriving.id !== id) return;  // dropped meanwhile
    for (const [i, offset, at, bytes] of segments) {
      if (!(i >= 0 && i < arriving.sizes.length) || offset < 0 || offset + bytes > arriving.sizes[i] || at < 0 || at + bytes > buffer.byteLength)
        return modelFailed(id, `a piece of tensor ${i} outside it`);
      const slot = call("mw_model_slot", "number", ["number"], [i]) >>> 0;
      Module.HEAPU8.set(new Uint8Array(buffer, at, bytes), slot + offset);
      arriving.left -= bytes;
    }
    if (!arriving.left) finishModel();
  } finally {
    postMessage({ type: "model-buffer", buffer }, [buffer]);
  }
}

function finishModel() {
  const { id, waiting } = arriving;
  arriving = null;
  call("mw_model_finish", "number", [], []);
  postMessage({ type: "model", id });
  waiting.forEach(handle);
}

function dropArriving() {
  const { id, waiting } = arriving;
  arriving = null;
  call("mw_model_drop", null, ["number"], [id]);
  waiting.forEach(handle);  // answered now: the model is gone
}

function views({ seq, model, ask, held }) {
  const r = onHeap(JSON.stringify({ model, ask, ...(held ? { held } : {}) }), (p) => call("mw_views", "string", ["number"], [p]));
  if (r.error) return postMessage({ type: "views", seq, error: r.error });
  const at = call("mw_numbers", "number", [], []) >>> 0;
  const numbers = new Float32Array(Module.HEAPU8.buffer.slice(at, at + 4 * r.count));
  postMessage({ type: "views", seq, model, header: r.header, numbers, ms: r.ms, views_ms: r.views_ms, recomputed_from: r.recomputed_from },
    [numbers.buffer]);
}

function intervene({ seq, model, request }) {
  const r = onHeap(JSON.stringify({ model, request }), (p) => call("mw_intervene", "string", ["number"], [p]));
  postMessage(r.error !== undefined ? { type: "intervene", seq, error: r.error } : { type: "intervene", seq, result: r.result });
}

function trace({ seq, model, ids, top, padding }) {
  const r = onHeap(JSON.stringify({ model, ids, top, padding }), (p) => call("mw_trace", "string", ["number"], [p]));
  postMessage(r.error ? { type: "trace", seq, error: r.error } : { type: "trace", seq, result: r });
}

// Sweeps: each slot's runs a slice (SWEEP_SLICE_MS) a turn, so newer inputs' answer or a stop that came
// meanwhile is read between slices; each slice's cells go to the page.
const SWEEP_SLICE_MS = 100;
const sweeps = new Map();  // slot → seq of the sweep running there
const sweepTurns = new MessageChannel();
sweepTurns.port1.onmessage = ({ data: slot }) => {
  const seq = sweeps.get(slot);
  if (seq === undefined) return;  // stopped meanwhile
  const r = JSON.parse(call("mw_sweep_step", "string", ["string", "number"], [slot, SWEEP_SLICE_MS]));
  if (r.error) {
    sweeps.delete(slot);
    return postMessage({ type: "sweep", slot, seq, error: r.error });
  }
  const at = call("mw_sweep_values", "number", ["string"], [slot]) >>> 0;
  const values = new Float32Array(Module.HEAPU8.buffer.slice(at, at + 4 * r.total));
  postMessage({ type: "sweep", slot, seq, done: r.done, total: r.total, values, baseline: r.baseline, source: r.source }, [values.buffer]);
  if (r.done < r.total) sweepTurns.port2.postMessage(slot);
  else {
    sweeps.delete(slot);
    call("mw_sweep_stop", null, ["string"], [slot]);
  }
};

function sweepBegin(message) {
  const { slot, seq } = message;
  const r = onHeap(JSON.stringify(message), (p) => call("mw_sweep_begin", "string", ["number"], [p]));
  if (r.error) {
    sweeps.delete(slot);
    return postMessage({ type: "sweep", slot, seq, error: r.error });
  }
  if (!sweeps.has(slot)) sweepTurns.port2.postMessage(slot);  // (a slot already running goes on with the new one)
  sweeps.set(slot, seq);
}

// An answer waits for the next turn, so newer inputs that came meanwhile replace it.
const turns = new MessageChannel();
turns.port1.onmessage = () => {
  const asked = latestViews;
  latestViews = null;
  if (asked) views(asked);
};

function handle(message) {
  if (arriving && message.model === arriving.id) return arriving.waiting.push(message);  // computed once it is in
  if (message.type === "model-begin") beginModel(message);
  else if (message.type === "model-piece") modelPiece(message);
  else if (message.type === "drop") {
    if (arriving && arriving.id === message.id) dropArriving();
    else call("mw_model_drop", null, ["number"], [message.id]);
  }
  else if (message.type === "views") {
    if (!latestViews) turns.port2.postMessage(0);
    latestViews = message;
  } else if (message.type === "trace") trace(message);
  else if (message.type === "intervene") intervene(message);
  else if (message.type === "tokenizer") {
    const r = onHeap(JSON.stringify({ name: message.name, files: message.files }), (p) => call("mw_tokenizer", "string", ["number", "number"], [message.id, p]));
    if (r.error) postMessage({ type: "model", id: message.id, error: `its tokenizer: ${r.error}` });
  }
  else if (message.type === "sweep") sweepBegin(message);
  else if (message.type === "sweep-stop") {
    if (arriving) arriving.waiting = arriving.waiting.filter((m) => !(m.type === "sweep" && m.slot === message.slot));
    sweeps.delete(message.slot);
    call("mw_sweep_stop", null, ["string"], [message.slot]);
  }
  else if (message.type === "bench") {
    const { model, ids, reps } = message;
    postMessage({ type: "bench", result: onHeap(JSON.stringify({ model, ids, reps }), (p) => call("mw_bench", "string", ["number"], [p])) });
  }
  else if (message.type === "crash") throw new Error("the model worker was asked to stop (a test)");
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "load") {
    loadWorkerWasm(message, "model_worker", "the model's wasm", () => {
      ready = true;
      while (queue.length) handle(queue.shift());
    });
    return;
  }
  if (message.type === "crash") throw new Error("the model worker was asked to stop (a test)");
  if (!ready) queue.push(message);
  else handle(message);
};
