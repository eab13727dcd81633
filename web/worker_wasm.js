// Shared by the page's Web Workers (train_worker.js, model_worker.js; each loads it with importScripts):
// starts the worker's own wasm from the page's build flavour ("simd/" or "baseline/"), a renamed wasm (a
// host that refuses .wasm files: wasmSuffix) compiled from its bytes, and posts {type: "failed", why}
// when it cannot, {type: "ready"} when it runs (then onReady).
"use strict";

// message: the page's {type: "load", flavour, wasmSuffix}; name: "train_worker" | "model_worker";
// what: the wasm in words for a failure ("the trainer's wasm").
function loadWorkerWasm(message, name, what, onReady) {
  const base = message.flavour + "/";
  const suffix = typeof message.wasmSuffix === "string" ? message.wasmSuffix : "";
  self.Module = {
    locateFile: (file) => base + file + (file.endsWith(".wasm") ? suffix : ""),
    // a renamed wasm is served as text, which streaming compilation refuses: compiled from the bytes
    ...(suffix ? { instantiateWasm: (imports, receive) => {
      fetch(base + name + ".wasm" + suffix).then((r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); return r.arrayBuffer(); })
        .then((bytes) => WebAssembly.instantiate(bytes, imports)).then((r) => receive(r.instance, r.module))
        .catch((e) => postMessage({ type: "failed", why: `could not load ${name}.wasm${suffix}: ${e.message}` }));
      return {};
    } } : {}),
    onAbort: (why) => postMessage({ type: "failed", why: `${what} stopped: ${why}` }),
    onRuntimeInitialized: () => {
      postMessage({ type: "ready" });
      onReady();  // (the messages that waited for it: their answers follow "ready")
    },
  };
  try {
    importScripts(base + name + "-wasm.js");
  } catch (e) {
    postMessage({ type: "failed", why: `could not load ${base}${name}-wasm.js: ${e.message}` });
  }
}
