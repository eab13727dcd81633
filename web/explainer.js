// The page glue: feature checks, loading state, URL parameters, and window.attentionExplainer
// (ready, getState, setState, compute, loadModel, modelTrace, handout) over the functions the wasm exports,
// and the bytes of model files and downloads on their way into the wasm. Computes nothing itself.
(function () {
  "use strict";
  const statusBox = document.getElementById("status");
  const statusText = document.getElementById("status-text");
  const canvas = document.getElementById("canvas");

  function showError(message) {
    statusBox.classList.remove("hidden");
    statusBox.classList.add("error");
    statusText.textContent = message;
  }

  let resolveReady, rejectReady;
  const ready = new Promise((resolve, reject) => { resolveReady = resolve; rejectReady = reject; });
  let running = false;

  function call(name, arg) {
    if (!running) throw new Error("the explainer is not ready yet: await attentionExplainer.ready");
    let text;
    if (arg === undefined) {
      text = Module.ccall(name, "string", [], []);
    } else {
      // On the heap, not ccall's "string" (which copies onto the small wasm stack): requests of
      // many megabytes (a T = 2048 compute) must fit.
      const size = Module.lengthBytesUTF8(arg) + 1;
      const pointer = Module._malloc(size);
      if (!pointer) throw new Error("not enough memory for a request of " + size + " bytes");
      try {
        Module.stringToUTF8(arg, pointer, size);
        text = Module.ccall(name, "string", ["number"], [pointer]);
      } finally {
        Module._free(pointer);
      }
    }
    const reply = JSON.parse(text);
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply;
  }

  const api = {
    ready,
    /** Current inputs and computed results (tokens, weights as T×T rows, output, ...). */
    getState() {
      const state = call("attn_get_state").state;
      const models = call("attn_model_status");  // the model picker: loading / offered, loaded models
      state.loading = models.loading;
      state.models = models.models;
      return state;
    },
    /** Changes inputs; an invalid value throws an Error that names the key. Returns the new state; where a
     *  loaded model's worker computes the answer (it holds the weights), or a built-in model is not loaded
     *  yet, a Promise of it, once the answer (or the model) arrived. */
    setState(partial) {
      if (partial === null || typeof partial !== "object" || Array.isArray(partial))
        throw new Error("setState takes an object, e.g. {view: 'weights'}");
      if (builtinNotLoaded(partial.model)) return loadBuiltin(partial.model).then(() => api.setState(partial));
      call("attn_set_state", JSON.stringify(partial));
      return modelPending() ? api.settled() : api.getState();
    },
    /** A Promise of the state once no change waits for the model's worker (getState().model_run.pending). */
    settled() {
      return new Promise((resolve) => {
        const check = () => (modelPending() ? setTimeout(check, 4) : resolve(api.getState()));
        check();
      });
    },
    /** The CLI's compute: {Q,K,V} or {X,Wq,Wk,Wv[,X_kv]}, causal, scale, temperature, backend. */
    compute(input) {
      const text = typeof input === "string" ? input : JSON.stringify(input);
      if (text === undefined) throw new Error("compute takes a JSON object");
      return call("attn_compute", text).result;
    },
    /** Where a control is on the canvas, in CSS pixels ({x, y, w, h}), e.g. "causal", "tab:weights". */
    itemRect(name) { return call("attn_item_rect", String(name)).rect; },
  };
  const modelPending = () => Module.ccall("attn_model_run_pending", "number", [], []) !== 0;
  /** Calls fn(state) after every accepted change (learner, URL or setState); returns an unsubscribe. */
  const listeners = new Set();
  api.subscribe = (fn) => { listeners.add(fn); return () => listeners.delete(fn); };
  /** Median ms of one attention kernel call (no JSON, no copies): bench({T, d, causal, backend, reps}). */
  api.bench = ({ T = 64, d = 64, causal = false, backend = "simd", reps = 5 } = {}) => {
    const ms = running ? Module.ccall("attn_bench", "number", ["number", "number", "number", "string", "number"], [T, d, causal ? 1 : 0, String(backend), reps]) : -1;
    if (ms < 0) throw new Error(`bench: not ready, or a bad request (T ${T}, d ${d}, backend "${backend}", reps ${reps})`); return ms; };
  /** Median ms of one matrix product c = a·b [+ bias] (no copies): benchMatmul({M, K, N, layout, bias, backend, reps}). */
  api.benchMatmul = ({ M = 64, K = 768, N = 768, layout = "NN", bias = false, backend = "simd", reps = 5 } = {}) => {
    const form = String(layout) + (bias ? "+bias" : "");
    const ms = running ? Module.ccall("attn_bench_matmul", "number", ["number", "number", "number", "string", "string", "number"], [M, K, N, form, String(backend), reps]) : -1;
    if (ms < 0) throw new Error(`benchMatmul: not ready, or a bad request (${M} x ${K} x ${N}, layout "${form}", backend "${backend}", reps ${reps})`); return ms; };
  window.attentionExplainer = api;

  // [Models] Loading a model of any family the loader reads (GPT-2, Llama, Mistral, Qwen 2 / 3,
  // Gemma 2 / 3): dropped or chosen files, or a Hugging Face repository, one file or sharded
  // (model.safetensors.index.json + shards). The page only moves bytes: config, index and tokenizer
  // files whole, the weights streamed chunk by chunk through one reused wasm buffer into the loader
  // (src/app/js_model_api.cpp), which parses everything. Downloads are kept in Cache Storage.
  const CHUNK_BYTES = 4 << 20;
  // Files are read in larger pieces than the wasm takes them: each read of a Blob is a round trip to
  // the browser's file reader, and while the page draws, a 4 MiB read costs as much as a 32 MiB one.
  const READ_BYTES = 32 << 20;
  const MAX_TEXT_FILE_BYTES = 64 << 20;  // Gemma 3's tokenizer.json is ~33 MB
  const WEIGHTS_FILE = "model.safetensors";
  const INDEX_FILE = "model.safetensors.index.json";
  const HUB_BASE = "https://huggingface.co";
  // The wasm memory may grow to 4 GB (-sMAXIMUM_MEMORY in cmake/app.cmake); the weights are held as
  // the files store them, so their bytes are what the model takes. Half a GB stays for the app, the
  // tokenizer and one forward pass: larger weights are refused before a byte of them is fetched.
  const WASM_MEMORY_BYTES = 4 * 1024 ** 3;
  const MODEL_BYTES_LIMIT = WASM_MEMORY_BYTES - 512 * 1024 ** 2;
  const KEEP_CACHE = "attention-explainer-models";      // Cache Storage: downloaded files by URL
  const KEPT_FILE = "attention-explainer-kept.json";    // beside them: which files make a whole model
  let chunkPointer = 0;    // the reused chunk buffer in the wasm heap (0: not allocated yet)
  let currentLoad = null;  // {name, cancel(), cancelled}
  const hubModels = new Map();  // repository → {revision, base}: loaded, offered or kept from the hub
  const pageParams = new URLSearchParams(location.search);
  let urlApplied = null;  // a Promise while a built-in model the link names is fetched
  let pendingUrlChoice = null;  // {model, values: {layer, head, ablate...}} from the URL, applied once that model is loaded
  // The learner's access token for gated repositories: in this variable only (never in the state,
  // the URL, storage or a message), sent as Authorization to the hub's origin only.
  let hubToken = "";

  // Calls an export that takes small arguments (names, numbers) and returns a JSON reply.
  function modelCall(name, types = [], args = []) {
    if (!running) throw new Error("the explainer is not ready yet: await attentionExplainer.ready");
    const reply = JSON.parse(Module.ccall(name, "string", types, args));
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply;
  }
  const heapMB = () => Math.round(Module.HEAPU8.length / 1048576);
  function refusedMemory(file, bytes) {
    return new Error(`${file}: the browser refused to give the page ${Math.ceil(bytes / 1048576)} MB more memory ` +
      `(it has ${heapMB()} MB already)`);
  }
  const sizeText = (bytes) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`);
  function tooLarge(name, bytes, files) {
    return new Error(`${name}: its weights are ${sizeText(bytes)}${files > 1 ? ` in ${files} files` : ""}; this page's ` +
      `WebAssembly memory is at most 4 GB, so weights up to about ${sizeText(MODEL_BYTES_LIMIT)} load here: choose a ` +
      `smaller model (or a 16-bit copy of this one)`);
  }
  function feedWeights(bytes) {
    for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) {
      const part = bytes.subarray(offset, Math.min(offset + CHUNK_BYTES, bytes.length));
      Module.HEAPU8.set(part, chunkPointer);  // HEAPU8 read again each time: growing memory replaces it
      modelCall("attn_model_feed", ["number", "number"], [chunkPointer, part.length]);
    }
  }
  function addTextFile(file, bytes) {
    const pointer = Module._malloc(Math.max(1, bytes.length)) >>> 0;
    if (!pointer) throw refusedMemory(file, bytes.length);
    try {
      Module.HEAPU8.set(bytes, pointer);
      return modelCall("attn_model_add_text", ["string", "number", "number"], [file, pointer, bytes.length]);
    } finally {
      Module._free(pointer);
    }
  }
  function cancelledError(name) {
    const e = new Error(`loading ${name} was cancelled`);
    e.name = "AbortError";
    return e;
  }

  // One load at a time: a new one cancels the one in progress. `body` reads the files through the
  // helpers it is given; whatever fails rejects with an Error naming the file, and the app keeps
  // its current model. Progress counts the weights: per file, and all files together once
  // `setTotal` said how many bytes they are (else the sum of the sizes begun so far).
  async function runLoad(name, body, onProgress) {
    if (!running) throw new Error("the explainer is not ready yet: await attentionExplainer.ready");
    if (currentLoad) currentLoad.cancel();
    const controller = new AbortController();
    const load = { name, cancelled: false, cancel() { load.cancelled = true; controller.abort(); } };
    currentLoad = load;
    const check = () => { if (load.cancelled) throw cancelledError(name); };
    let lastReport = 0, totalGiven = false;
    const helpers = {
      signal: controller.signal,
      check,
      total: 0, loaded: 0, fileTotal: 0, fileLoaded: 0,
      text(file, bytes) {
        check();
        if (bytes.length > MAX_TEXT_FILE_BYTES) throw new Error(`${file}: ${bytes.length} bytes, larger than any file of this kind`);
        modelCall("attn_model_progress", ["string", "number", "number"], [`${name} · ${file}`, 0, helpers.total]);
        return addTextFile(file, bytes);
      },
      setTotal(bytes) {
        totalGiven = bytes > 0;
        helpers.total = Math.max(0, bytes);
        modelCall("attn_model_progress", ["string", "number", "number"], [`${name} · ${sizeText(bytes)} of weights`, 0, helpers.total]);
      },
      beginWeights(file, size) {
        check();
        helpers.weightsFile = file;
        modelCall("attn_model_begin_weights", ["string", "number"], [file, size]);
        if (!totalGiven) helpers.total += size;
        modelCall("attn_model_progress", ["string", "number", "number"], [`${name} · ${file}`, -1, helpers.total]);
        helpers.fileTotal = size;
        helpers.fileLoaded = 0;
        report(true);
      },
      feed(bytes) {
        check();
        feedWeights(bytes);
        helpers.loaded += bytes.length;
        helpers.fileLoaded += bytes.length;
        report(false);
      },
    };
    function report(force) {
      if (!onProgress) return;
      const now = performance.now();
      if (!force && now - lastReport < 50 && helpers.fileLoaded < helpers.fileTotal) return;
      lastReport = now;
      const { loaded, total, fileLoaded, fileTotal } = helpers;
      try {
        onProgress({ file: helpers.weightsFile, fileLoaded, fileTotal, loaded, total,
          percent: total > 0 ? Math.min(100, (100 * loaded) / total) : null });
      } catch (e) { console.error(e); }
    }
    try {
      // The chunk buffer first, while memory is free: a model too large then fails in the loader,
      // which knows how much it needs.
      if (!chunkPointer) {
        chunkPointer = Module._malloc(CHUNK_BYTES) >>> 0;  // >>> 0: addresses past 2 GB are unsigned
        if (!chunkPointer) throw refusedMemory(name, CHUNK_BYTES);
      }
      modelCall("attn_model_begin", ["string"], [name]);
      slowFrames(true);
      await body(helpers);
      check();
      const info = modelCall("attn_model_finish").model;
      if (pendingUrlChoice && pendingUrlChoice.model === info.name) {
        const { values } = pendingUrlChoice;
        pendingUrlChoice = null;
        for (const [key, value] of Object.entries(values)) {
          try { api.setState({ [key]: value }); } catch (e) { console.warn(`attention explainer: URL parameter ignored: ${e.message}`); }
        }
      }
      return info;
    } catch (e) {
      let error = e instanceof Error ? e : new Error(String(e));
      if (load.cancelled) error = cancelledError(name);
      else if (error.name === "AbortError") error = cancelledError(name);
      controller.abort();  // a failed load stops its downloads too (and what was being kept of them)
      // A cancelled load has already been dropped (and a newer one may be running now).
      if (currentLoad === load && !load.cancelled) {
        try { modelCall("attn_model_error", ["string"], [error.message]); } catch (ignored) { /* not running */ }
      }
      throw error;
    } finally {
      if (currentLoad === load) {
        currentLoad = null;
        slowFrames(false);
      }
    }
  }
  // While bytes arrive, the app draws 5 frames a second (enough for the progress bar and Cancel)
  // instead of every animation frame: a page that draws all the time starves the browser's file
  // reads and downloads (measured: 548 MB read in 22 s while drawing, 0.6 s without).
  let slowFrameTimer = null;
  function slowFrames(on) {
    if (on && !slowFrameTimer && Module.pauseMainLoop) {
      Module.pauseMainLoop();
      slowFrameTimer = setInterval(() => Module.ccall("attn_run_frame", null, [], []), 200);
    } else if (!on && slowFrameTimer) {
      clearInterval(slowFrameTimer);
      slowFrameTimer = null;
      Module.resumeMainLoop();
    }
  }

  // Files: File objects (a FileList, or from a dropped folder) or {name, data: ArrayBuffer|Uint8Array}.
  // Paths ("gpt2/config.json") count by their last part; the folder's name names the model.
  function collectFiles(files) {
    const list = files && typeof files[Symbol.iterator] === "function" ? Array.from(files)
      : files && typeof files.length === "number" ? Array.prototype.slice.call(files) : null;
    if (!list || !list.length) throw new Error("loadModel: files must be a non-empty list of files");
    const byName = new Map();
    let folder = "";
    for (const f of list) {
      const path = String((f && (f.webkitRelativePath || f.name)) || "");
      const parts = path.split(/[\\/]/).filter(Boolean);
      const base = parts.pop() || "";
      if (!folder && parts.length) folder = parts[parts.length - 1];
      let source;
      const blob = typeof Blob !== "undefined" && (f instanceof Blob ? f : f && f.blob instanceof Blob ? f.blob : null);
      if (blob) {
        source = { size: blob.size, read: async (a, b) => new Uint8Array(await blob.slice(a, b).arrayBuffer()),
          stream: () => blob.stream() };
      } else if (f && (f.data instanceof ArrayBuffer || ArrayBuffer.isView(f.data))) {
        const bytes = f.data instanceof ArrayBuffer ? new Uint8Array(f.data) : new Uint8Array(f.data.buffer, f.data.byteOffset, f.data.byteLength);
        source = { size: bytes.length, read: async (a, b) => bytes.subarray(a, b) };
      } else {
        throw new Error(`${base || "loadModel"}: not a File, nor {name, data: ArrayBuffer or Uint8Array}`);
      }
      if (!base) throw new Error("loadModel: a file without a name");
      if (byName.has(base)) console.warn(`attention explainer: two files named ${base}; the first one is read`);
      else byName.set(base, source);
    }
    return { byName, folder };
  }
  function tokenizerPlan(has) {
    if (has("tokenizer.json")) return ["tokenizer.json"];
    if (has("vocab.json") && has("merges.txt")) return ["vocab.json", "merges.txt"];
    // a BERT folder without tokenizer.json: its WordPiece vocabulary and, when there, its lower-casing
    if (has("vocab.txt")) return has("tokenizer_config.json") ? ["vocab.txt", "tokenizer_config.json"] : ["vocab.txt"];
    const one = has("vocab.json") ? "merges.txt" : has("merges.txt") ? "vocab.json" : "tokenizer.json (or vocab.json + merges.txt, or vocab.txt)";
    throw new Error(`${one}: missing; a model needs its tokenizer files`);
  }
  // A file's bytes into two buffers it reuses, each read while the other is fed (a BYOB reader: no new
  // memory per piece; BERT-base's 418 MB read in 0.65-0.84 s here, against 1.6-2.1 s in fresh 32 MB slices).
  // False where the browser has no such reader for it (then the slices below).
  async function streamBuffers(h, stream) {
    let reader;
    try {
      reader = stream.getReader({ mode: "byob" });
    } catch (e) {
      return false;
    }
    try {
      let spare = new ArrayBuffer(CHUNK_BYTES);
      let pending = reader.read(new Uint8Array(new ArrayBuffer(CHUNK_BYTES)));
      for (;;) {
        const { done, value } = await pending;
        if (done) break;
        pending = reader.read(new Uint8Array(spare));
        pending.catch(() => {});  // a failure is reported when it is awaited
        h.feed(value);
        spare = value.buffer;
      }
    } finally {
      if (h.signal.aborted) reader.cancel().catch(() => {});
    }
    return true;
  }
  // One weights file streamed from `source` ({size, read(a, b), stream?}); the next piece is read while the
  // loader converts this one (reading and converting overlap).
  async function streamSource(h, file, source) {
    h.beginWeights(file, source.size);
    if (source.stream && await streamBuffers(h, source.stream())) return;
    const readAt = (offset) => (offset < source.size ? source.read(offset, Math.min(offset + READ_BYTES, source.size)) : null);
    let next = readAt(0);
    for (let offset = 0; next; offset += READ_BYTES) {
      const bytes = await next;
      next = readAt(offset + READ_BYTES);
      if (next) next.catch(() => {});  // a failure is reported when it is awaited
      h.feed(bytes);
    }
  }
  async function streamBody(h, body) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        h.feed(value);
      }
    } finally {
      if (h.signal.aborted) reader.cancel().catch(() => {});
    }
  }
  function loadFiles(files, { name, onProgress } = {}) {
    const { byName, folder } = collectFiles(files);
    const has = (file) => byName.has(file);
    if (!has("config.json")) throw new Error("config.json: missing from the chosen files");
    const sharded = has(INDEX_FILE);
    if (!sharded && !has(WEIGHTS_FILE)) {
      const other = ["pytorch_model.bin", "model.onnx", "tf_model.h5"].find(has);
      throw new Error(`${WEIGHTS_FILE}: missing from the chosen files` + (other ? ` (${other} is a format this app does not read)` : ""));
    }
    const textFiles = ["config.json", ...tokenizerPlan(has)];
    const modelName = String(name || folder || "local model");
    return runLoad(modelName, async (h) => {
      for (const file of textFiles) {
        const source = byName.get(file);
        if (source.size > MAX_TEXT_FILE_BYTES) throw new Error(`${file}: ${source.size} bytes, larger than any file of this kind`);
        h.text(file, await source.read(0, source.size));
      }
      let weights = [WEIGHTS_FILE];
      if (sharded) {
        const index = byName.get(INDEX_FILE);
        if (index.size > MAX_TEXT_FILE_BYTES) throw new Error(`${INDEX_FILE}: ${index.size} bytes, larger than any file of this kind`);
        weights = h.text(INDEX_FILE, await index.read(0, index.size)).shards;
        for (const shard of weights)
          if (!has(shard)) throw new Error(`${shard}: missing from the chosen files (${INDEX_FILE} names it)`);
        // A weights file the index does not name is refused by the loader, before any shard is read.
        for (const file of byName.keys())
          if (file.endsWith(".safetensors") && !weights.includes(file)) h.beginWeights(file, byName.get(file).size);
      }
      const total = weights.reduce((sum, file) => sum + byName.get(file).size, 0);
      if (total > MODEL_BYTES_LIMIT) throw tooLarge(modelName, total, weights.length);
      h.setTotal(total);
      for (const file of weights) await streamSource(h, file, byName.get(file));
    }, onProgress);
  }

  // A repository: `${base}/${repo}/resolve/${revision}/${file}` (Hugging Face's layout).
  const REPO_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;
  // trusted: the base came from the page's own script (loadModel's option), not from a link.
  function hubRequest(hub, revision, base, { trusted = true } = {}) {
    if (typeof hub !== "string" || !REPO_PATTERN.test(hub) || hub.includes(".."))
      throw new Error(`hub: "${hub}" is not a repository id like owner/name`);
    if (typeof revision !== "string" || !/^[A-Za-z0-9._\/-]{1,200}$/.test(revision)) throw new Error(`revision: "${revision}" is not a branch, tag or commit`);
    let root;
    try { root = new URL(String(base)); } catch (e) { throw new Error(`base: "${base}" is not a URL`); }
    if (root.protocol !== "https:" && root.protocol !== "http:") throw new Error(`base: "${base}" must be an http(s) URL`);
    const prefix = String(base).replace(/\/+$/, "");
    // The token goes to Hugging Face, or to a hub the page's own script named; a hub_base that
    // came with a link never receives it.
    const tokenOrigin = root.origin === new URL(HUB_BASE).origin || trusted ? root.origin : null;
    const r = { repo: hub, revision, base: prefix, host: root.host, tokenOrigin,
      url: (file) => `${prefix}/${hub}/resolve/${encodeURIComponent(revision)}/${file}` };
    r.headers = (url, extra = {}) => {
      const h = { ...extra };
      if (hubToken && r.tokenOrigin && new URL(url).origin === r.tokenOrigin) h.Authorization = `Bearer ${hubToken}`;
      return h;
    };
    return r;
  }
  function setHubToken(token) {
    if (token === undefined || token === null) return;
    const t = String(token).trim();
    // Checked before it is ever sent (a header cannot carry every character); never repeated back.
    if (t && !/^[A-Za-z0-9_.\-]{8,255}$/.test(t))
      throw new Error("token: not an access token (those are 8 to 255 letters, digits, '_', '-' or '.'; " +
        "huggingface.co/settings/tokens makes them, starting hf_)");
    hubToken = t;
  }
  function gatedError(r, file, status) {
    const local = "or download the files on huggingface.co yourself and choose them here (Choose files…, or drop the folder)";
    if (hubToken && !r.tokenOrigin)
      return new Error(`${r.repo}: HTTP ${status} for ${file}; your access token is sent to huggingface.co only, not to ` +
        `${r.host}: load it from huggingface.co, ${local}`);
    if (hubToken)
      return new Error(`${r.repo}: the hub refused the access token (HTTP ${status} for ${file}): check that the token ` +
        `may read this repository and that you accepted its licence on its page, ${local}`);
    return new Error(`${r.repo}: a gated repository (HTTP ${status} for ${file}): accept its licence on its page at ` +
      `huggingface.co, then paste your access token (huggingface.co/settings/tokens) into the token field and ` +
      `download again, ${local}`);
  }
  // A hub file: null for an optional file that is not there (404); an Error naming the file else.
  async function hubFetch(r, file, { signal, method = "GET", optional = false } = {}) {
    const url = r.url(file);
    let response;
    try {
      response = await fetch(url, { method, signal, headers: r.headers(url) });
    } catch (e) {
      if (e && e.name === "AbortError") throw e;
      throw new Error(`${file}: could not download ${url} (${e && e.message ? e.message : e})`);
    }
    if (optional && response.status === 404) return null;
    if (response.status === 401 || response.status === 403) throw gatedError(r, file, response.status);
    if (!response.ok) throw new Error(`${file}: HTTP ${response.status} from ${url}`);
    return response;
  }
  // The size of a hub file without downloading it: HEAD (the hub says X-Linked-Size for large
  // files), else a one-byte range; -1 when neither says.
  async function hubFileSize(r, file, signal) {
    const url = r.url(file);
    try {
      const head = await fetch(url, { method: "HEAD", signal, headers: r.headers(url) });
      if (head.status === 401 || head.status === 403) throw gatedError(r, file, head.status);
      if (head.status === 404) throw new Error(`${file}: HTTP 404 from ${url}`);
      const n = Number(head.headers.get("X-Linked-Size") || head.headers.get("Content-Length"));
      if (head.ok && n > 0) return n;
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;  // a network failure: try a range request
    }
    try {
      const ranged = await fetch(url, { signal, headers: r.headers(url, { Range: "bytes=0-0" }) });
      const match = /\/(\d+)\s*$/.exec(ranged.headers.get("Content-Range") || "");
      if (ranged.body) ranged.body.cancel().catch(() => {});
      if (match) return Number(match[1]);
    } catch (e) { /* unknown */ }
    return -1;
  }

  // Kept downloads: each file in Cache Storage under its own URL (no token is ever part of a key or
  // an entry), and one small JSON entry per repository and revision, written last, naming the files
  // of a whole model: only a model that loaded is kept.
  async function keepStore() {
    try {
      return typeof caches !== "undefined" && window.isSecureContext ? await caches.open(KEEP_CACHE) : null;
    } catch (e) { return null; }  // storage blocked (a private window, a sandboxed frame)
  }
  async function keptManifest(store, r) {
    if (!store) return null;
    try {
      const hit = await store.match(r.url(KEPT_FILE));
      return hit ? await hit.json() : null;
    } catch (e) { return null; }
  }
  async function keptModels() {
    const store = await keepStore();
    if (!store) return [];
    const list = [];
    for (const request of await store.keys()) {
      if (!request.url.endsWith("/" + KEPT_FILE)) continue;
      try {
        const m = await (await store.match(request)).json();
        list.push({ repo: m.repo, revision: m.revision, base: m.base, bytes: m.bytes, files: Object.keys(m.files) });
      } catch (e) { /* a damaged entry: not listed */ }
    }
    return list;
  }
  async function refreshKept() {
    const list = await keptModels();
    for (const k of list) if (!hubModels.has(k.repo)) hubModels.set(k.repo, { revision: k.revision, base: k.base });
    if (running) modelCall("attn_model_kept", ["string"], [JSON.stringify(list.map(({ repo, revision, bytes }) => ({ repo, revision, bytes })))]);
    return list;
  }
  async function forgetKept(r) {
    const store = await keepStore();
    const manifest = await keptManifest(store, r);
    if (!manifest) return false;
    await store.delete(r.url(KEPT_FILE));
    await Promise.all(Object.keys(manifest.files).map((file) => store.delete(r.url(file))));
    return true;
  }

  // The built-in models: folders beside the page (./build_wasm.sh site copies them), fetched when the
  // learner, a tour stop, a link or setState first chooses one, not in the first load.
  const BUILTIN_MODELS = new Map([["trained (built in)", "models/trained/"]]);
  const builtinLoads = new Map();  // name → the Promise of its load in progress
  const builtinNotLoaded = (name) => BUILTIN_MODELS.has(name) &&
    !call("attn_model_status").models.some((m) => m.name === name);
  function loadBuiltin(name, onProgress) {
    if (!BUILTIN_MODELS.has(name))
      return Promise.reject(new Error(`builtin: "${name}" is not a built-in model (${[...BUILTIN_MODELS.keys()].join(", ")})`));
    if (builtinLoads.has(name)) return builtinLoads.get(name);
    const folder = BUILTIN_MODELS.get(name);
    const load = runLoad(name, async (h) => {
      const get = async (file) => {
        const response = await fetch(folder + file, { signal: h.signal });
        h.check();
        if (!response.ok) throw new Error(`${name}: ${folder}${file}: HTTP ${response.status}`);
        return response;
      };
      for (const file of ["config.json", "tokenizer.json"]) h.text(file, new Uint8Array(await (await get(file)).arrayBuffer()));
      const weights = await get(WEIGHTS_FILE + wasmSuffix);  // an H5P package stores it as .txt, as the wasm
      const size = Number(weights.headers.get("Content-Length")) || 0;
      h.setTotal(size);
      h.beginWeights(WEIGHTS_FILE, size);
      await streamBody(h, weights.body);
    }, onProgress).finally(() => builtinLoads.delete(name));
    builtinLoads.set(name, load);
    return load;
  }
  // The id, revision, base and token are checked at once (a refusal the loader shows); then the load.
  function loadHub({ hub, revision = "main", base = HUB_BASE, token, onProgress, trustedBase = true } = {}) {
    const r = hubRequest(hub, revision, base, { trusted: trustedBase });
    setHubToken(token);
    return downloadHub(r, onProgress, trustedBase);
  }
  async function downloadHub(r, onProgress, trustedBase) {
    const store = await keepStore();
    const kept = await keptManifest(store, r);  // a whole model kept before: nothing is downloaded
    const keeping = [];  // [file, bytes, Promise of the put]: what this download keeps
    const keep = (file, bytes, put) => {
      put.catch(() => {});  // awaited below; a failure there is a warning, never an unhandled rejection
      keeping.push([file, bytes, put]);
    };
    const info = await runLoad(r.repo, async (h) => {
      // A small file (config, index, tokenizer): the kept copy, else the hub's (null: optional, not there).
      async function text(file, optional = false) {
        if (kept) {
          const hit = kept.files[file] !== undefined && await store.match(r.url(file));
          if (hit) return new Uint8Array(await hit.arrayBuffer());
          if (optional && kept.files[file] === undefined) return null;
        }
        const response = await hubFetch(r, file, { signal: h.signal, optional });
        h.check();
        if (!response) return null;
        const length = Number(response.headers.get("Content-Length"));
        if (length > MAX_TEXT_FILE_BYTES) throw new Error(`${file}: ${length} bytes, larger than any file of this kind`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (store) keep(file, bytes.length, store.put(r.url(file), new Response(bytes)));
        return bytes;
      }
      // config.json alone says whether the family is one the loader reads.
      h.text("config.json", await text("config.json"));
      const index = await text(INDEX_FILE, true);
      h.check();
      let shards = [WEIGHTS_FILE], indexTotal = null;
      if (index) ({ shards, total_size: indexTotal } = h.text(INDEX_FILE, index));
      // Every weights file's size before the first byte of weights (and before the tokenizer).
      const sizes = [];
      for (const file of shards) sizes.push(kept && kept.files[file] !== undefined ? kept.files[file] : await hubFileSize(r, file, h.signal));
      h.check();
      const total = sizes.every((n) => n > 0) ? sizes.reduce((a, b) => a + b, 0) : indexTotal || 0;
      if (total > MODEL_BYTES_LIMIT) throw tooLarge(r.repo, total, shards.length);
      h.setTotal(total);
      const tokenizer = await text("tokenizer.json", true);
      h.check();
      // Without tokenizer.json: GPT-2's vocab.json + merges.txt, else a BERT repository's vocab.txt
      // (+ tokenizer_config.json, its lower-casing).
      const vocabJson = !tokenizer && await text("vocab.json", true);
      const vocabTxt = !tokenizer && !vocabJson && await text("vocab.txt", true);
      if (tokenizer) h.text("tokenizer.json", tokenizer);
      else if (vocabJson) {
        const merges = await text("merges.txt", true);
        if (!merges) throw new Error("merges.txt: the repository has vocab.json but no merges.txt (HTTP 404)");
        h.text("vocab.json", vocabJson);
        h.text("merges.txt", merges);
      } else if (vocabTxt) {
        const config = await text("tokenizer_config.json", true);
        if (config) h.text("tokenizer_config.json", config);
        h.text("vocab.txt", vocabTxt);
      } else throw new Error("tokenizer.json: the repository has no tokenizer.json, vocab.json + merges.txt or vocab.txt (HTTP 404)");
      for (const [i, file] of shards.entries()) {
        const hit = kept && await store.match(r.url(file));
        if (hit) {
          h.beginWeights(file, Number(hit.headers.get("Content-Length")) || sizes[i]);
          await streamBody(h, hit.body);
          continue;
        }
        const response = await hubFetch(r, file, { signal: h.signal });
        // The size before the bytes: Content-Length (of the plain body; a compressed one says nothing).
        const encoding = (response.headers.get("Content-Encoding") || "identity").toLowerCase();
        const size = (encoding === "identity" && Number(response.headers.get("Content-Length"))) || Math.max(0, sizes[i]);
        let body = response.body;
        if (store && !kept) {  // one branch into the loader, one into the browser's cache
          const [mine, cached] = body.tee();
          body = mine;
          keep(file, size, store.put(r.url(file), new Response(cached, { headers: size ? { "Content-Length": String(size) } : {} })));
        }
        h.beginWeights(file, size);
        await streamBody(h, body);
      }
      hubModels.set(r.repo, { revision: r.revision, base: r.base, trusted: trustedBase });
    }, onProgress).catch(async (e) => {
      // Nothing half-kept: what this download put in the cache goes.
      if (keeping.length) await Promise.allSettled(keeping.map(([file, , put]) => put.then(() => store.delete(r.url(file)))));
      throw e;
    });
    if (keeping.length) {
      try {
        await Promise.all(keeping.map(([, , put]) => put));
        const files = Object.fromEntries(keeping.map(([file, bytes]) => [file, bytes]));
        const weights = Object.entries(files).filter(([f]) => f.endsWith(".safetensors")).reduce((a, [, n]) => a + n, 0);
        await store.put(r.url(KEPT_FILE), new Response(JSON.stringify({ repo: r.repo, revision: r.revision, base: r.base,
          files, bytes: weights, family: info.family }), { headers: { "Content-Type": "application/json" } }));
      } catch (e) {
        console.warn(`attention explainer: ${r.repo} loaded, but the browser did not keep its files (${e && e.message ? e.message : e})`);
        await Promise.allSettled(keeping.map(([file]) => store.delete(r.url(file))));
      }
      await refreshKept().catch(() => {});
    }
    return info;
  }

  // What a repository's weights weigh, for the offer: kept ones from the browser, else the single
  // file's size, else the shards' (from the index).
  async function hubWeightsSize(r) {
    const kept = await keptManifest(await keepStore(), r);
    if (kept) return kept.bytes;
    try {
      return await hubFileSize(r, WEIGHTS_FILE);
    } catch (e) {
      if (!/HTTP 404/.test(e.message)) return -1;
    }
    try {
      const response = await hubFetch(r, INDEX_FILE, { optional: true });
      if (!response) return -1;
      const index = await response.json();
      const shards = [...new Set(Object.values((index && index.weight_map) || {}))];
      const sizes = await Promise.all(shards.map((s) => hubFileSize(r, s)));
      if (sizes.length && sizes.every((n) => n > 0)) return sizes.reduce((a, b) => a + b, 0);
      const total = index && index.metadata && Number(index.metadata.total_size);
      return total > 0 ? total : -1;
    } catch (e) { return -1; }
  }
  // ?hub=owner/name: offered in the model picker with its size; loaded on the learner's click.
  function offerHub(repo, revision, base) {
    let r;
    try { r = hubRequest(repo, revision, base, { trusted: false }); } catch (e) { console.warn(`attention explainer: URL parameter ignored: ${e.message}`); return; }
    hubModels.set(r.repo, { revision: r.revision, base: r.base, fromLink: true });
    modelCall("attn_model_offer", ["string", "number"], [r.repo, -1]);
    hubWeightsSize(r).then((bytes) => {
      try { if (running) modelCall("attn_model_offer", ["string", "number"], [r.repo, bytes]); } catch (e) { console.warn(e.message); }
    });
  }

  api.loadModel = (options = {}) => {
    try {
      if (!options || typeof options !== "object") throw new Error("loadModel takes {files}, {hub, revision, base, token} or {builtin}");
      if (options.files !== undefined) return loadFiles(options.files, options);
      if (options.hub !== undefined) return loadHub(options);
      if (options.builtin !== undefined) return loadBuiltin(options.builtin, options.onProgress);
      throw new Error("loadModel takes {files}, {hub, revision, base, token} or {builtin}");
    } catch (e) {
      // Refused before any byte was read (no config.json, a bad repository id): the app says why too.
      if (running && !currentLoad) try { modelCall("attn_model_error", ["string"], [e.message]); } catch (ignored) { /* */ }
      return Promise.reject(e);
    }
  };
  /** Stops the load in progress (its Promise rejects with an AbortError); the current model stays. */
  api.cancelModelLoad = () => {
    if (!currentLoad) return false;
    currentLoad.cancel();
    currentLoad = null;
    if (running) modelCall("attn_model_cancel");
    return true;
  };
  /** Frees a loaded model (the hand-made one becomes current if it was); returns getState(). */
  api.unloadModel = (name) => {
    modelCall("attn_model_unload", ["string"], [String(name)]);
    const hub = hubModels.get(name);
    if (hub && !hub.fromLink) hubModels.delete(name);
    refreshKept().catch(() => {});  // a kept one keeps its place in the hub list
    return api.getState();
  };
  /** A Promise of the models the browser keeps: [{repo, revision, base, bytes, files}]. */
  api.keptModels = () => keptModels();
  /** Removes a kept model's files from the browser; a Promise of whether there were any. */
  api.forgetKeptModel = async ({ hub, revision = "main", base } = {}) => {
    // where it came from: as given, else as the kept entry says (the model may be unloaded since)
    const kept = (await keptModels()).find((k) => k.repo === hub && k.revision === revision);
    const r = hubRequest(hub, revision, base || (kept && kept.base) || HUB_BASE);
    const gone = await forgetKept(r);
    await refreshKept();
    return gone;
  };
  /** A Promise of the CLI's `model` JSON for the current model: {model, tokens, token_ids, attention, next},
   *  computed in the model's worker (in the page where none runs); a bad request rejects naming its key. */
  api.modelTrace = ({ text, top = 5 } = {}) => new Promise((resolve, reject) => {
    const asked = call("attn_model_trace_request", JSON.stringify({ text, top }));
    if (asked.result) return resolve(asked.result);
    modelTraces.set(asked.seq, { text, top, resolve, reject });
    modelWorker.postMessage({ type: "trace", seq: asked.seq, model: asked.model, ids: asked.ids, top: asked.top, padding: asked.padding });
  });
  /** A Promise of the CLI's `model --ablate/--cut/--patch-from/--target …` JSON for the current model, computed
   *  without drawing (in its worker where it runs): {text, ablate, ablate_kind, cut, patch: {from, heads | resid},
   *  target, against, at, sweep, top}. */
  api.intervene = (request = {}) => new Promise((resolve, reject) => {
    const asked = call("attn_model_intervene", JSON.stringify(request));
    if (asked.result) return resolve(asked.result);
    const seq = ++interveneSeq;
    intervenes.set(seq, { request, resolve, reject });
    modelWorker.postMessage({ type: "intervene", seq, model: asked.model, request: asked.request });
  });
  /** Benchmark: median ms of the current model's whole forward on T tokens ({ms, flops}). */
  api.benchModel = ({ T = 64, reps = 3 } = {}) => modelCall("attn_model_bench", ["number", "number"], [T, reps]);

  // [Train] The train view's actions and its model's files (src/app/js_train_api.cpp). The zip is
  // made by fflate (dist/fflate.js), fetched on the first Download: it is not in the first page load.
  /** train("start" | "pause" | "reset" | "use" | "experiment") → getState().train; a refused Start
   *  throws an Error that names the setting. */
  api.train = (action) => call("attn_train", JSON.stringify({ action })).train;
  /** Every point of the curves: {run, scaled, unscaled}, each {loss [per step], accuracy_steps, accuracy}. */
  api.trainCurves = () => call("attn_train_curves");
  /** The trained model's folder: {name, files: [{name, data: Uint8Array}]} (config.json, model.safetensors, tokenizer.json). */
  api.trainedModelFiles = () => {
    const reply = call("attn_train_files");
    return { name: reply.name, files: reply.files.map((f) => ({ name: f.name, data: Module.HEAPU8.slice(f.pointer >>> 0, (f.pointer >>> 0) + f.size) })) };
  };
  let fflateLoad = null;
  function loadFflate() {
    if (window.fflate) return Promise.resolve(window.fflate);
    if (!fflateLoad) fflateLoad = new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement("script"), { src: "fflate.js" });
      script.onload = () => (window.fflate ? resolve(window.fflate) : reject(new Error("fflate.js: loaded, but it defines no fflate")));
      script.onerror = () => { fflateLoad = null; reject(new Error("fflate.js: could not be loaded (is the site complete?)")); };
      document.head.appendChild(script);
    });
    return fflateLoad;
  }
  // Training also runs between frames, in tasks posted back to back (a MessageChannel: no clamp as
  // setTimeout's) while a run or the experiment goes on, so a slow frame rate does not bound the
  // training rate (requestIdleCallback found almost no idle time in headless Chromium on a loaded
  // machine). At a frame rate near 60/s a task only takes what is left before the next frame is due
  // (waiting for the next frame when that is under 1 ms); with frames 33 ms apart or more, up to
  // 8 ms each: a frame waits at most one task. Nothing trains: a look four times a second.
  const trainChannel = new MessageChannel();
  let lastFrame = 0, frameGap = 1000 / 60;
  const watchFrames = (ts) => {
    if (lastFrame) frameGap = 0.9 * frameGap + 0.1 * Math.min(1000, ts - lastFrame);
    lastFrame = ts;
    requestAnimationFrame(watchFrames);
  };
  requestAnimationFrame(watchFrames);
  function trainBetweenFrames() {
    const budget = frameGap >= 33 ? 8 : Math.min(8, lastFrame + 1000 / 60 - 2 - performance.now());
    if (running && budget < 1) return requestAnimationFrame(() => trainChannel.port2.postMessage(0));
    let more = false;
    try {
      if (running) more = Module.ccall("attn_train_idle", "number", ["number"], [budget]) === 1;
    } catch (e) { console.error(e); }
    if (more) trainChannel.port2.postMessage(0);
    else setTimeout(trainBetweenFrames, 250);
  }
  trainChannel.port1.onmessage = trainBetweenFrames;
  setTimeout(trainBetweenFrames, 250);
  // Where runs train once it is ready: a Web Worker (web/train_worker.js, the trainer's own small
  // wasm), started the first time the train view shows, so training never takes the main thread
  // (the slices above keep training in the page where a Worker cannot start). The C++ session posts
  // it {start | until | stop} (Module.trainWorkerPost) and hears its reports (attn_train_reports,
  // the weights copied onto the heap for the call).
  let trainWorker = null;
  function trainWorkerFailed(why) {
    console.warn("train worker: " + why);
    try { if (running) Module.ccall("attn_train_worker_failed", null, ["string"], [String(why)]); } catch (e) { console.error(e); }
  }
  function deliverTrainReports({ reports, params }) {
    const pointer = params ? Module._malloc(params.byteLength) >>> 0 : 0;
    try {
      if (params) Module.HEAPU8.set(new Uint8Array(params.buffer), pointer);
      call("attn_train_reports", JSON.stringify({ reports, params: pointer }));
    } finally {
      if (pointer) Module._free(pointer);
    }
  }
  function startTrainWorker() {
    if (trainWorker) return;
    try {
      trainWorker = new Worker("train_worker.js");
    } catch (e) {
      return trainWorkerFailed(e.message || String(e));
    }
    trainWorker.onerror = (e) => { e.preventDefault(); trainWorkerFailed(e.message || "the worker stopped"); };
    trainWorker.onmessage = ({ data }) => {
      if (data.type === "ready") Module.ccall("attn_train_worker_ready", null, [], []);
      else if (data.type === "failed") trainWorkerFailed(data.why);
      else if (data.type === "reports") deliverTrainReports(data);
    };
    trainWorker.postMessage({ type: "load", flavour: api.build, wasmSuffix });
  }
  const trainWorkerPost = (text) => trainWorker.postMessage(JSON.parse(text));

  // [Model worker] The loaded model's forward in a Web Worker (web/model_worker.js, the forward's own small
  // wasm), started when a model is first loaded (never in the first load): each model's weights are moved
  // in once (Module.modelWorkerSendModel, copied out of the heap in pieces, below), what the views
  // need for the learner's change (a new text, layer, token, intervention, …) is posted there
  // (Module.modelWorkerPost) and the answer comes back (attn_model_run_result), so no change waits for
  // the model. Where it cannot start or stops, the page computes itself and says so (attn_model_worker_failed).
  let modelWorker = null;
  let modelWorkerFailedWhy = "";
  const modelTraces = new Map();  // seq → {text, top, resolve, reject}: modelTrace requests in the worker
  const intervenes = new Map();   // seq → {request, resolve, reject}: intervene requests in the worker
  let interveneSeq = 0;
  function modelWorkerFailed(why) {
    if (modelWorkerFailedWhy) return;
    modelWorkerFailedWhy = String(why);
    modelSends = [];
    console.warn("model worker: " + why);
    try { modelWorker && modelWorker.terminate(); } catch (e) { /* gone already */ }
    let reply = { traces: [] };
    try { if (running) reply = call("attn_model_worker_failed", String(why)); } catch (e) { console.error(e); }
    for (const [seq, asked] of intervenes) {  // and the interventions, where it has the weights (else it says why)
      intervenes.delete(seq);
      try { asked.resolve(call("attn_model_intervene", JSON.stringify(asked.request)).result); } catch (e) { asked.reject(e); }
    }
    for (const seq of reply.traces) {  // the page answers the traces the worker had
      const asked = modelTraces.get(seq);
      modelTraces.delete(seq);
      Module.ccall("attn_model_trace_forget", null, ["number"], [seq]);
      if (!asked) continue;
      try { asked.resolve(call("attn_model_trace_request", JSON.stringify({ text: asked.text, top: asked.top })).result); }
      catch (e) { asked.reject(e); }
    }
  }
  function deliverModelRun(data) {
    if (data.error !== undefined) return call("attn_model_run_result", JSON.stringify({ seq: data.seq, error: data.error }));
    // the trace's matrices are made first, then the numbers copied straight into them (no second copy)
    const r = call("attn_model_run_result", JSON.stringify({ seq: data.seq, header: data.header, count: data.numbers.length,
      ms: data.ms, views_ms: data.views_ms, recomputed_from: data.recomputed_from }));
    if (!r.copy) return r;
    let at = 0;
    for (const [pointer, floats] of r.copy) {
      if (floats) Module.HEAPF32.set(data.numbers.subarray(at, at + floats), (pointer >>> 0) / 4);
      at += floats;
    }
    return call("attn_model_run_filled");
  }
  function deliverModelTrace({ seq, result, error }) {
    const asked = modelTraces.get(seq);
    modelTraces.delete(seq);
    if (!asked) return;
    try {
      const answer = call("attn_model_trace_answer", JSON.stringify(error !== undefined ? { seq, error } : { seq, next: result.next })).result;
      answer.attention = result.attention;
      asked.resolve(answer);
    } catch (e) { asked.reject(e); }
  }
  function deliverIntervene({ seq, result, error }) {
    const asked = intervenes.get(seq);
    intervenes.delete(seq);
    if (asked) (error !== undefined ? asked.reject(new Error(error)) : asked.resolve(result));
  }
  function startModelWorker() {
    if (modelWorker || modelWorkerFailedWhy) return;
    try {
      modelWorker = new Worker("model_worker.js");
    } catch (e) {
      return modelWorkerFailed(e.message || String(e));
    }
    modelWorker.onerror = (e) => { e.preventDefault(); modelWorkerFailed(e.message || "its script could not be loaded, or it stopped"); };
    modelWorker.onmessage = ({ data }) => {
      try {
        if (data.type === "ready") Module.ccall("attn_model_worker_ready", null, [], []);
        else if (data.type === "failed") modelWorkerFailed(data.why);
        else if (data.type === "model" && data.error) modelWorkerFailed(`the model could not be moved in: ${data.error}`);
        else if (data.type === "model") Module.ccall("attn_model_worker_has", null, ["number"], [data.id]);  // the page's copy goes
        else if (data.type === "intervene") deliverIntervene(data);
        else if (data.type === "model-buffer") modelPieceBack(data.buffer);
        else if (data.type === "views") deliverModelRun(data);
        else if (data.type === "trace") deliverModelTrace(data);
        else if (data.type === "sweep") call("attn_model_sweep_arrived", JSON.stringify({ ...data, values: data.values && Array.from(data.values) }));
        else if (data.type === "bench" && workerBench) { workerBench(data.result); workerBench = null; }
      } catch (e) { console.error(e); }
    };
    modelWorker.postMessage({ type: "load", flavour: api.build, wasmSuffix });
  }
  function modelWorkerPost(text) {
    const message = JSON.parse(text);
    if (message.type === "drop") modelSends = modelSends.filter((send) => send.id !== message.id);  // gone: no more pieces
    if (modelWorker) modelWorker.postMessage(message);
  }
  // A model's tensors move in as pieces of modelPieceBytes copied out of the heap into a few buffers that
  // travel to the worker and come back to be filled again ("model-buffer"), so the page writes each weight
  // once into memory it has touched before (a fresh copy of the whole model would stall it for seconds),
  // a piece per message turn, while the worker writes them into its own heap.
  const MODEL_PIECES_OUT = 3;
  let modelPieceBytes = 8 << 20;
  let modelSends = [];  // {id, tensors: [[pointer, bytes]], tensor, offset}: the first is being sent
  let modelPieceBuffers = [], modelPiecesOut = 0;
  function modelWorkerSendModel(id, header, tensorsText) {
    if (!modelWorker) return;
    const tensors = JSON.parse(tensorsText);
    modelWorker.postMessage({ type: "model-begin", id, header, sizes: tensors.map(([, bytes]) => bytes) });
    modelSends.push({ id, tensors, tensor: 0, offset: 0 });
    sendModelPieces();
  }
  function sendModelPieces() {
    while (modelWorker && modelSends.length && modelPiecesOut < MODEL_PIECES_OUT) {
      const send = modelSends[0];
      const buffer = modelPieceBuffers.pop() || new ArrayBuffer(modelPieceBytes);
      const piece = new Uint8Array(buffer), segments = [];  // [tensor, its byte offset, where in the piece, bytes]
      let used = 0;
      while (used < modelPieceBytes && send.tensor < send.tensors.length) {
        const [pointer, bytes] = send.tensors[send.tensor];
        const n = Math.min(bytes - send.offset, modelPieceBytes - used);
        const from = (pointer >>> 0) + send.offset;
        if (n > 0) piece.set(Module.HEAPU8.subarray(from, from + n), used);
        segments.push([send.tensor, send.offset, used, n]);
        used += n;
        send.offset += n;
        if (send.offset >= bytes) send.tensor += 1, send.offset = 0;
      }
      if (send.tensor >= send.tensors.length) modelSends.shift();
      modelPiecesOut += 1;
      modelWorker.postMessage({ type: "model-piece", id: send.id, segments, buffer }, [buffer]);
    }
    if (!modelSends.length && !modelPiecesOut) modelPieceBuffers = [];  // all sent: the buffers go
  }
  function modelPieceBack(buffer) {
    modelPiecesOut -= 1;
    if (buffer.byteLength === modelPieceBytes) modelPieceBuffers.push(buffer);
    sendModelPieces();
  }
  /** Writes with the model: token `id` added to the end of the text (as a click in the next-token strip);
   *  computed like typing, in the model's worker where it runs. Returns the text. */
  api.writeToken = (id) => modelCall("attn_model_write", ["number"], [Number(id)]).text;
  /** Benchmark: a Promise of the model worker's own times at T tokens ({full_ms, append_ms, pack_ms,
   *  recomputed_from}, medians of reps): the whole forward of T + 1 tokens, and appending the last one to
   *  a cache holding T (tests/bench/model_bench.mjs). */
  let workerBench = null;
  api.benchModelWorker = ({ T = 64, reps = 3 } = {}) => new Promise((resolve, reject) => {
    const { model, vocab } = modelCall("attn_model_worker_model");
    if (workerBench) return reject(new Error("bench: one at a time"));
    workerBench = (r) => (r.error ? reject(new Error(r.error)) : resolve(r));
    const ids = Array.from({ length: Number(T) + 1 }, (_, i) => (i * 7919 + 13) % vocab);
    modelWorker.postMessage({ type: "bench", model, ids, reps: Number(reps) });
  });
  /** For tests: the model worker stops as if it crashed (its onerror runs). */
  api.stopModelWorkerForTest = () => modelWorker && modelWorker.postMessage({ type: "crash" });
  api.setModelPieceBytesForTest = (bytes) => { modelPieceBytes = Math.max(1, Math.floor(bytes)); };
  /** The folder as one zip: a Promise of {name: "trained-....zip", zip: Uint8Array} (files under the folder's name). */
  api.trainedModelZip = async () => {
    const { name, files } = api.trainedModelFiles();
    const fflate = await loadFflate();
    const entries = {};
    for (const f of files) entries[`${name}/${f.name}`] = f.data;
    return { name: `${name}.zip`, zip: fflate.zipSync(entries, { level: 6 }) };
  };

  // The model picker's buttons (drawn by the app) and drag and drop onto the page.
  const fileInput = document.getElementById("model-files");
  const folderInput = document.getElementById("model-folder");
  const loadChosen = (input) => {
    const files = Array.from(input.files || []);
    input.value = "";  // choosing the same files again fires another change
    if (files.length) api.loadModel({ files }).catch((e) => console.warn(`attention explainer: ${e.message}`));
  };
  for (const input of [fileInput, folderInput]) if (input) input.addEventListener("change", () => loadChosen(input));
  async function droppedFiles(entries, fallback) {
    if (!entries.length) return fallback;
    const out = [];
    async function walk(entry, path, depth) {
      if (out.length >= 1000 || depth > 8) return;
      if (entry.isFile) {
        const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
        out.push({ name: path + file.name, blob: file });
      } else if (entry.isDirectory) {
        const reader = entry.createReader();
        for (;;) {
          const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
          if (!batch.length) break;
          for (const child of batch) await walk(child, path + entry.name + "/", depth + 1);
        }
      }
    }
    for (const entry of entries) await walk(entry, "", 0);
    return out;
  }
  const stage = document.getElementById("stage");
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
  window.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    stage.classList.add("dropping");
  });
  window.addEventListener("dragleave", (e) => { if (!e.relatedTarget) stage.classList.remove("dropping"); });
  window.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    stage.classList.remove("dropping");
    // The entries must be taken now: the drop's items are gone once the handler returns.
    const entries = Array.from(e.dataTransfer.items || []).map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry()).filter(Boolean);
    const files = Array.from(e.dataTransfer.files || []);
    droppedFiles(entries, files).then((list) => api.loadModel({ files: list }))
      .catch((error) => console.warn(`attention explainer: ${error.message}`));
  });

  // The address bar follows the inputs (a permalink at any moment). Which inputs it carries, their
  // types and defaults come from the wasm's table of inputs (src/ui/input_table.cpp): every
  // "permalink" input that is not at its default, numbers exact (getState gives each float as the
  // shortest text that reads back as the same float).
  let inputTable = [];
  const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  // inputs whose URL text is their JSON (the interventions: ?ablate=[[0,1]])
  const JSON_TYPES = ["heads", "cuts", "patch"];
  function urlText(field, value) {
    if (field.type === "boolean") return value ? "1" : "0";
    if (field.type === "matrix") return value.map((row) => row.join(",")).join(";");
    if (field.type === "views") return value.join(",");
    if (JSON_TYPES.includes(field.type)) return JSON.stringify(value);
    return String(value);
  }
  function permalinkSearch(state) {
    const params = new URLSearchParams();
    // A model from the hub comes back as an offer (?hub=) that loads with one click.
    const hub = state.model !== undefined && hubModels.get(state.model);
    if (hub) {
      params.set("hub", state.model);
      if (hub.revision !== "main") params.set("revision", hub.revision);
      if (hub.base !== HUB_BASE) params.set("hub_base", hub.base);
    }
    const changed = (name) => { const f = inputTable.find((x) => x.name === name); return f && !sameValue(state[name], f.default); };
    for (const field of inputTable) {
      if (field.url !== "permalink") continue;
      // The token by its index; written with any other sentence or model, whose default token may
      // not be the same word.
      const always = field.name === "token" && (changed("sentence") || changed("model"));
      if (!always && sameValue(state[field.name], field.default)) continue;
      params.set(field.name, urlText(field, state[field.name]));
    }
    const text = params.toString();
    return text ? "?" + text : "";
  }
  // The inputs and tokens with the selected query's row of weights: the light part of getState().
  const summaryState = () => call("attn_get_summary").state;
  /** The light part of getState(): the inputs (view, sentence, model, token, checklist, checks...), the
   *  selected query's row of weights and every check's marks as "progress" (web/lms.js reads it per change). */
  api.getSummary = () => summaryState();
  api.permalink = () => location.origin + location.pathname + permalinkSearch(summaryState());
  /** Opens the printable handout (web/handout.html) of the current state in a new tab; returns its window. */
  api.handout = () => window.open(new URL("handout.html", location.href).pathname + permalinkSearch(summaryState()), "_blank");
  /** What the handout shows: {state: getState(), steps: the seven steps' numbers, practice: the exercises}. */
  api.handoutData = () => ({ state: api.getState(), ...call("attn_get_handout").handout });

  function download(name, blob) {
    const url = URL.createObjectURL(blob);
    const link = Object.assign(document.createElement("a"), { href: url, download: name });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // The weight matrix as a labelled PNG, drawn from getState() with the app's colour map (viridis).
  const VIRIDIS = [[68, 1, 84], [71, 45, 123], [59, 82, 139], [44, 114, 142], [33, 145, 140], [39, 174, 129],
    [94, 201, 98], [173, 220, 48], [253, 231, 37]];
  function viridis(t) {
    const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1), i = Math.min(Math.floor(x), VIRIDIS.length - 2), f = x - i;
    return `rgb(${VIRIDIS[i].map((c, k) => Math.round(c + (VIRIDIS[i + 1][k] - c) * f)).join(",")})`;
  }
  function weightsPng() {
    const s = api.getState();
    const cell = 36, font = "13px 'DejaVu Sans', sans-serif";
    const probe = document.createElement("canvas").getContext("2d");
    probe.font = font;
    const labelW = Math.max(...s.tokens.map((t) => probe.measureText(t).width)) + 12;
    const labelH = Math.max(...s.kv_tokens.map((t) => probe.measureText(t).width)) + 12;
    const canvas = document.createElement("canvas");
    canvas.width = labelW + cell * s.kv_tokens.length + 8;
    canvas.height = labelH + cell * s.tokens.length + 40;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.font = font; ctx.textBaseline = "middle";
    s.weights.forEach((row, i) => {
      ctx.fillStyle = "#222"; ctx.textAlign = "right";
      ctx.fillText(s.tokens[i], labelW - 6, labelH + cell * (i + 0.5));
      row.forEach((w, j) => {
        const masked = s.scores[i][j] === null;
        ctx.fillStyle = masked ? "#bbbbbb" : viridis(w);
        ctx.fillRect(labelW + cell * j, labelH + cell * i, cell - 1, cell - 1);
        ctx.fillStyle = masked ? "#555" : (w > 0.6 ? "#000" : "#fff"); ctx.textAlign = "center";
        ctx.fillText(masked ? "−∞" : w.toFixed(2), labelW + cell * (j + 0.5), labelH + cell * (i + 0.5));
      });
    });
    s.kv_tokens.forEach((t, j) => {
      ctx.save(); ctx.translate(labelW + cell * (j + 0.5), labelH - 6); ctx.rotate(-Math.PI / 2);
      ctx.fillStyle = "#222"; ctx.textAlign = "left"; ctx.fillText(t, 0, 0); ctx.restore();
    });
    ctx.fillStyle = "#222"; ctx.textAlign = "left";
    ctx.fillText("Attention weights: rows = queries, columns = keys; each row sums to 1" +
      (s.causal ? " (grey: masked, causal)" : ""), 6, canvas.height - 20);
    return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  }

  // The learner's progress kept in the browser as {"version": 2, "checklist": N, "checks": {id: answer}}:
  // the Prove-it ticks and the answers to the checks (Derive's typed cells, each view's question).
  // The first releases stored the bare number (read as version 0), then {"version": 1, "checklist": N}:
  // both are read, with no answers. Anything unreadable (corrupt, or from a newer version) is ignored
  // with a warning and kept aside under KEY + ":unreadable" before the next save. A save changes
  // only the ticks and answers this page changed, so two open pages do not undo each other's.
  // A page that hosts the explainer for a course site (web/lms.html) keeps its progress under its own key.
  const PROGRESS_KEY = document.documentElement.dataset.progressKey || "attention-explainer:checklist";
  const PROGRESS_VERSION = 2;
  const validTicks = (v) => Number.isInteger(v) && v >= 0 && v <= 0xffff;
  const plainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  function readProgress() {
    let raw;
    try { raw = localStorage.getItem(PROGRESS_KEY); } catch (e) { return null; }  // storage blocked (private mode, sandbox)
    if (raw === null) return null;
    if (/^\d+$/.test(raw) && validTicks(Number(raw))) return { checklist: Number(raw), checks: {} };  // version 0
    let stored;
    try { stored = JSON.parse(raw); } catch (e) { stored = undefined; }
    if (stored && stored.version === 1 && validTicks(stored.checklist)) return { checklist: stored.checklist, checks: {} };
    if (stored && stored.version === PROGRESS_VERSION && validTicks(stored.checklist) && plainObject(stored.checks))
      return { checklist: stored.checklist, checks: stored.checks };
    setProgressAside(raw, stored && stored.version > PROGRESS_VERSION ? "from a newer version" : "unreadable");
    return null;
  }
  function setProgressAside(raw, why) {
    console.warn(`attention explainer: stored progress ignored (${why}): ${raw.slice(0, 80)}; kept as ${PROGRESS_KEY}:unreadable`);
    try { localStorage.setItem(PROGRESS_KEY + ":unreadable", raw); } catch (e) { /* storage blocked */ }
  }
  // The stored progress into the app; answers the app refuses (an unknown check, a bad value) are
  // set aside like unreadable data, and the ticks still come in.
  function restoreProgress() {
    const progress = readProgress();
    if (progress === null) return;
    try {
      api.setState({ checklist: progress.checklist, checks: progress.checks });
    } catch (e) {
      setProgressAside(JSON.stringify(progress), e.message);
      api.setState({ checklist: progress.checklist });
      progress.checks = {};
    }
    savedTicks = progress.checklist;
    savedChecks = progress.checks;
  }
  let savedTicks = 0, savedChecks = {};  // the progress as this page last read or wrote it
  function saveProgress(ticks, checks) {
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    const changedIds = [...new Set([...Object.keys(savedChecks), ...Object.keys(checks)])]
      .filter((id) => !same(savedChecks[id], checks[id]));
    if (ticks === savedTicks && !changedIds.length) return;
    const stored = readProgress();
    const changed = ticks ^ savedTicks;
    const mergedTicks = ((stored === null ? savedTicks : stored.checklist) & ~changed) | (ticks & changed);
    const mergedChecks = { ...(stored === null ? savedChecks : stored.checks) };
    for (const id of changedIds) {
      if (checks[id] === undefined) delete mergedChecks[id];
      else mergedChecks[id] = checks[id];
    }
    savedTicks = ticks;
    savedChecks = checks;
    try {
      localStorage.setItem(PROGRESS_KEY, JSON.stringify({ version: PROGRESS_VERSION, checklist: mergedTicks, checks: mergedChecks }));
    } catch (e) { /* storage blocked */ }
  }
  // Each exercise's marks as last announced: a change is posted to the course page (and as a
  // window event) as {exercise, correct, total, answered}.
  let announcedProgress = null;
  function announceProgress(progress) {
    const before = announcedProgress;
    announcedProgress = progress;
    if (before === null) return;  // what the page opened with is no news
    for (const [exercise, marks] of Object.entries(progress)) {
      if (JSON.stringify(marks) === JSON.stringify(before[exercise]) || !marks.answered) continue;
      const message = { exercise, correct: marks.correct, total: marks.total, answered: marks.answered };
      if (marks.passed !== undefined) message.passed = marks.passed;
      embedBridge.progress(message);
      window.dispatchEvent(new CustomEvent("attention-explainer-progress", { detail: message }));
    }
  }
  // The selected token's attention in words, for screen readers (a hidden live region).
  const summaryBox = document.getElementById("summary");
  function summarise(state) {
    const row = state.selected_weights;
    const keys = state.kv_tokens;
    const top = row.map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]).slice(0, 3)
      .map(([w, j]) => `${keys[j]} ${w.toFixed(2)}`).join(", ");
    return `Query "${state.token_text}" (token ${state.token + 1} of ${state.tokens.length}) attends most to: ${top}.` +
      (state.causal ? " Causal mask on." : "") + (state.scale ? "" : " No square-root scaling.");
  }

  // The guided tour's stop, kept in the browser so ?tour=1 resumes where the learner left it.
  const TOUR_KEY = "attention-explainer:tour";
  function storedTourStep() {
    try { const v = Number(localStorage.getItem(TOUR_KEY)); return Number.isInteger(v) && v >= 0 ? v : 0; }
    catch (e) { return 0; }  // storage blocked: the tour starts at its first stop
  }
  let savedTourStep = null;
  function saveTourStep(step) {
    if (step === savedTourStep) return;
    savedTourStep = step;
    try { if (step >= 0) localStorage.setItem(TOUR_KEY, String(step)); else localStorage.removeItem(TOUR_KEY); }
    catch (e) { /* storage blocked */ }
  }

  let announceTimer = 0, addressTimer = 0, addressSearch = null;
  function stateChanged() {
    const state = summaryState();
    const summary = summarise(state);
    if (summaryBox.textContent !== summary) summaryBox.textContent = summary;
    window.dispatchEvent(new Event("attention-explainer-change"));  // web/a11y.js follows it
    saveProgress(state.checklist, state.checks);
    announceProgress(state.progress);
    if (state.tour_step >= 0 || savedTourStep !== null) saveTourStep(state.tour_step);
    if (!state.embed) {
      // A slider drag changes the state every frame; history.replaceState costs ~3 ms in Chromium,
      // which also throttles pages that call it too often: the address bar follows 200 ms later.
      const search = permalinkSearch(state);
      clearTimeout(addressTimer);
      if (search !== addressSearch) addressTimer = setTimeout(() => {  // (a sweep's progress leaves it as it is)
        addressSearch = search;
        try { history.replaceState(null, "", location.pathname + search + location.hash); } catch (e) { /* sandboxed */ }
      }, 200);
    } else {
      openFull.href = location.pathname + permalinkSearch(state);
    }
    if (!listeners.size && !embedBridge.active()) return;
    const full = api.getState();  // with the matrices, only for those who listen
    embedBridge.announce(full);
    for (const fn of listeners) {
      try { fn(full); } catch (e) { console.error(e); }
    }
  }

  // URL parameters -> inputs, as the table of inputs says. Each is applied on its own, so one bad
  // value only warns.
  // read by the page itself: the embedding page's origin, a repository offered from the hub
  const PAGE_PARAMS = ["origin", "hub", "revision", "hub_base", "tour"];
  // what only means something once the link's model is loaded (in the table's order)
  const MODEL_PARAMS = ["layer", "head", "ablate", "ablate_kind", "cut", "patch"];
  function paramValue(field, raw) {
    const key = field.name;
    const number = (text) => {
      const v = Number(text);
      if (text.trim() === "" || !Number.isFinite(v)) throw new Error(`${key}: "${text}" is not a number`);
      return v;
    };
    switch (field.type) {
      case "boolean":
        if (["1", "true", "on", "yes"].includes(raw)) return true;
        if (["0", "false", "off", "no"].includes(raw)) return false;
        throw new Error(key + ": must be 1/0 or true/false");
      case "integer":
        if (!/^-?\d+$/.test(raw)) throw new Error(key + ": must be a whole number");
        return Number(raw);
      case "number": return number(raw);
      case "token": return /^\d+$/.test(raw) ? Number(raw) : raw;
      case "views": return raw.split(",").map((v) => v.trim()).filter(Boolean);
      case "matrix": return raw.split(";").map((row) => row.split(",").map(number));
      default:
        if (!JSON_TYPES.includes(field.type)) return raw;
        try { return JSON.parse(raw); } catch (e) { throw new Error(`${key}: not JSON (${e.message})`); }
    }
  }
  function applyUrlParameters({ fetched = false, params = new URLSearchParams(window.location.search) } = {}) {
    // A built-in model the link names is fetched first (the link chose it), then every parameter
    // applies (if it could not be fetched, without it): the parameters as the page opened with them,
    // since the address bar follows the state in between (the model's arrival rewrites it).
    if (!fetched && builtinNotLoaded(params.get("model")))
      return loadBuiltin(params.get("model")).catch((e) => console.warn(`attention explainer: ${e.message}`))
        .then(() => applyUrlParameters({ fetched: true, params }));
    // In the table's order: the sentence and the model before the token, the layer and the head.
    const rank = (key) => { const i = inputTable.findIndex((f) => f.name === key); return i < 0 ? inputTable.length : i; };
    const ordered = [...params.keys()].sort((a, b) => rank(a) - rank(b));
    // A model is never downloaded when the page opens: ?hub= offers it, and its layer and head wait
    // for it; a model the page holds is chosen at once; any other name only warns (the hand-made
    // model stays).
    const hub = params.get("hub");
    if (hub) offerHub(hub, params.get("revision") || "main", params.get("hub_base") || HUB_BASE);
    const model = params.get("model");
    const skip = new Set();
    const held = model !== null && api.getState().models.some((m) => m.name === model);
    if (model !== null && model !== "handmade" && !held) {
      ["model", ...MODEL_PARAMS].forEach((key) => skip.add(key));
      if (hub && model === hub) {
        pendingUrlChoice = { model, values: {} };
        for (const key of MODEL_PARAMS.filter((k) => params.has(k))) {
          try { pendingUrlChoice.values[key] = paramValue(inputTable.find((f) => f.name === key), params.get(key)); }
          catch (e) { console.warn(`attention explainer: URL parameter ignored: ${e.message}`); }
        }
      } else console.warn(`attention explainer: model "${model}" is not loaded; the hand-made model stays ` +
        `(?hub=${model} would offer it for download)`);
    }
    for (const key of ordered) {
      try {
        if (PAGE_PARAMS.includes(key) || skip.has(key)) continue;
        // (case-insensitively too: data-break-t of the embed loader arrives as break_t)
        const field = inputTable.find((f) => f.name === key && f.url !== "no") ||
          inputTable.find((f) => f.name.toLowerCase() === key.toLowerCase() && f.url !== "no");
        if (!field) { console.warn(`attention explainer: unknown URL parameter "${key}" ignored`); continue; }
        api.setState({ [key]: paramValue(field, params.get(key)) });
      } catch (e) {
        console.warn(`attention explainer: URL parameter ignored: ${e.message}`);
      }
    }
  }

  // postMessage bridge for embedding pages (web/embed.js is the other end). Only messages from the
  // parent window whose origin the loader named in ?origin= are accepted; every message is checked.
  const openFull = document.getElementById("open-full");
  const embedBridge = (() => {
    const parentOrigin = new URLSearchParams(location.search).get("origin");
    const PREFIX = "attention-explainer:";
    // A course page opened from file:// has no origin a message can name ("null" in Firefox,
    // "file://" in Chromium): its frame is answered through "*" (the message still goes to the
    // parent window only, and only the parent's messages are obeyed).
    const opaque = (origin) => origin === "null" || origin === "file://";
    const active = () => window.parent !== window && !!parentOrigin &&
      (/^https?:\/\/[^/]+$/.test(parentOrigin) || opaque(parentOrigin));
    const send = (message) => { if (active()) window.parent.postMessage(message, opaque(parentOrigin) ? "*" : parentOrigin); };
    function handle(event) {
      const fromParent = event.origin === parentOrigin || (opaque(parentOrigin) && opaque(event.origin));
      if (event.source !== window.parent || !fromParent) return;  // not our embedding page
      const m = event.data;
      if (!m || typeof m !== "object" || typeof m.type !== "string" || !m.type.startsWith(PREFIX)) return;
      const id = typeof m.id === "number" || typeof m.id === "string" ? m.id : null;
      const reply = (body) => send({ type: PREFIX + "reply", id, ...body });
      try {
        if (m.type === PREFIX + "getState") reply({ ok: true, state: api.getState() });
        else if (m.type === PREFIX + "setState") {
          if (!m.state || typeof m.state !== "object" || Array.isArray(m.state)) throw new Error("state: must be an object");
          Promise.resolve(api.setState(m.state)).then((state) => reply({ ok: true, state }), (e) => reply({ ok: false, error: e.message }));
        } else reply({ ok: false, error: "unknown message type " + m.type });
      } catch (e) {
        reply({ ok: false, error: e.message });
      }
    }
    return {
      active,
      listen() { if (active()) { window.addEventListener("message", handle); send({ type: PREFIX + "ready", state: api.getState() }); } },
      announce(state) { send({ type: PREFIX + "changed", state }); },
      progress(marks) { send({ type: PREFIX + "progress", ...marks }); },
      failed(reason) { send({ type: PREFIX + "failed", error: reason }); },
    };
  })();

  // The explainer cannot start: the learner reads why, `ready` rejects, and an embedding page's
  // loader is told (its `ready` rejects with the same reason).
  function fail(message, reason) {
    showError(message);
    rejectReady(new Error(reason));
    ready.catch(() => {});
    embedBridge.failed(reason);
  }

  // Feature checks before downloading anything.
  const gl = document.createElement("canvas").getContext("webgl2");
  if (!gl) {
    fail("This explainer needs WebGL2, which this browser does not offer (or has turned off). " +
         "Try a current Firefox, Chrome, Edge or Safari, or enable hardware acceleration.", "WebGL2 is not available");
    return;
  }
  if (typeof WebAssembly !== "object") {
    fail("This explainer needs WebAssembly, which this browser does not offer.", "WebAssembly is not available");
    return;
  }

  // The UI font is one file for both builds, fetched while the wasm downloads and put into the
  // program's file system (/ui_font.ttf) before main() runs.
  const font = fetch("ui_font.ttf").then((r) => {
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    return r.arrayBuffer();
  });
  window.Module = {
    canvas,
    startTrainWorker,  // the train view's Web Worker (above)
    trainWorkerPost,
    startModelWorker,  // the loaded model's Web Worker (above)
    modelWorkerPost,
    modelWorkerSendModel,
    canvasCssSize: null,  // [width, height] in CSS pixels, kept by the observer below
    print: (text) => console.log(text),
    printErr: (text) => console.warn(text),
    // A fallback font for a script the UI font lacks (src/app/fonts.cpp asks, once per file, when
    // the text needs it): fetched from fonts/, put into the file system for the program to read,
    // then removed there (the program keeps its own copy of the bytes).
    requestFallbackFont: (file) => {
      fetch("fonts/" + file).then((r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        return r.arrayBuffer();
      }).then((bytes) => {
        const path = "/fallback-" + file;
        Module.FS_createDataFile("/", "fallback-" + file, new Uint8Array(bytes), true, false, false);
        Module.ccall("attn_font_arrived", null, ["string", "string"], [file, path]);
        try { Module.FS_unlink(path); } catch (e) { /* kept: only memory */ }
      }).catch((e) => {
        console.warn("fallback font " + file + ": " + e.message);
        Module.ccall("attn_font_arrived", null, ["string", "string"], [file, ""]);
      });
    },
    preRun: [() => {
      Module.addRunDependency("ui_font.ttf");
      font.then((bytes) => {
        Module.FS_createDataFile("/", "ui_font.ttf", new Uint8Array(bytes), true, false, false);
        Module.removeRunDependency("ui_font.ttf");
      }, (e) => {
        fail("Could not load the font ui_font.ttf (" + e.message + "): is the site complete?",
             "could not load ui_font.ttf (" + e.message + ")");
      });
    }],
    postRun: [() => {
      running = true;
      inputTable = call("attn_inputs_table").inputs;
      api.inputs = inputTable;
      restoreProgress();
      // The learner's system settings first; URL parameters may override them.
      const prefers = (query) => window.matchMedia && window.matchMedia(query).matches;
      api.setState({ reduced_motion: prefers("(prefers-reduced-motion: reduce)"),
        theme: prefers("(prefers-color-scheme: light)") ? "light" : "dark" });
      for (const name of BUILTIN_MODELS.keys()) modelCall("attn_model_on_request", ["string"], [name]);
      urlApplied = applyUrlParameters();
      refreshKept().catch((e) => console.warn(`attention explainer: the kept models could not be listed (${e.message})`));
      if (["1", "true", "on", "yes"].includes(pageParams.get("tour"))) {  // start, or resume, the tour
        const step = storedTourStep(), last = inputTable.find((f) => f.name === "tour_step").max;
        api.setState({ tour_step: Math.min(step, last) });
      }
      if (summaryState().embed) openFull.classList.remove("hidden");
      embedBridge.listen();
      stateChanged();
    }],
    // Coalesces bursts (a slider drag) into one announcement per animation frame.
    onStateChanged: () => {
      if (!announceTimer) announceTimer = requestAnimationFrame(() => { announceTimer = 0; stateChanged(); });
    },
    // The model picker (src/app/platform.cpp): choose files, load an offered or typed repository, cancel.
    requestModelFiles: () => { if (fileInput) fileInput.click(); },
    requestModelFolder: () => { if (folderInput) folderInput.click(); },
    // token: what the loader's token field holds ("" leaves the one in memory as it is).
    requestHubModel: (repo, revision, token) => {
      const known = hubModels.get(repo);
      const base = (known && known.base) || pageParams.get("hub_base") || HUB_BASE;
      // The offer's button asks for "main"; a ?revision= of the offered link wins over it.
      const chosen = known && (!revision || revision === "main") ? known.revision : revision || "main";
      api.loadModel({ hub: repo, revision: chosen, base, token: token || undefined, trustedBase: Boolean(known && known.trusted) })
        .catch((e) => console.warn(`attention explainer: ${e.message}`));
    },
    requestBuiltinModel: (name) => api.loadModel({ builtin: name }).catch((e) => console.warn(`attention explainer: ${e.message}`)),
    unloadModel: (name) => { try { api.unloadModel(name); } catch (e) { console.warn(`attention explainer: ${e.message}`); } },
    forgetKeptModel: (repo, revision) => api.forgetKeptModel({ hub: repo, revision })
      .catch((e) => console.warn(`attention explainer: ${e.message}`)),
    cancelModelLoad: () => api.cancelModelLoad(),
    downloadText: (name, mime, text) => download(name, new Blob([text], { type: mime })),
    downloadWeightsPng: () => weightsPng().then((blob) => download("attention-weights.png", blob)),
    downloadTrainedModel: () => api.trainedModelZip()
      .then(({ name, zip }) => download(name, new Blob([zip], { type: "application/zip" })))
      .catch((e) => console.warn(`attention explainer: ${e.message}`)),
    copyPermalink: () => window.Module.copyText(api.permalink()),
    openHandout: () => api.handout(),
    copyText: (text) => {
      const fallback = () => {
        const area = document.createElement("textarea");
        area.value = text;
        document.body.appendChild(area);
        area.select();
        try { document.execCommand("copy"); } catch (e) { console.warn("copy failed", e); }
        area.remove();
      };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).catch(fallback);
      else fallback();
    },
    onFirstFrame: () => {
      statusBox.classList.add("hidden");
      Promise.resolve(urlApplied).then(() => resolveReady(api));  // a built-in model a link named has arrived
    },
    onAbort: (what) => {
      fail("The explainer stopped unexpectedly (" + what + "). Reloading the page usually helps.",
           "the explainer stopped: " + String(what));
    },
  };
  canvas.addEventListener("webglcontextlost", (e) => e.preventDefault(), false);
  if (window.ResizeObserver) {
    new ResizeObserver((entries) => {
      const box = entries[entries.length - 1].borderBoxSize;
      const size = box && box[0] ? [box[0].inlineSize, box[0].blockSize]
        : [canvas.getBoundingClientRect().width, canvas.getBoundingClientRect().height];
      window.Module.canvasCssSize = size;
    }).observe(canvas);
  }

  // WASM SIMD (Chrome 91+, Firefox 89+, Safari 16.4+) or the baseline build: a 1-instruction SIMD
  // module validates only where SIMD is supported.
  const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8,
    0, 65, 0, 253, 15, 253, 98, 11]);
  const flavour = WebAssembly.validate(SIMD_PROBE) ? "simd" : "baseline";
  api.build = flavour;
  // An H5P library may not hold .wasm (nor .safetensors) files: its copy names them NAME + data-wasm-suffix (".txt").
  const wasmSuffix = document.documentElement.dataset.wasmSuffix || "";
  api.wasmSuffix = wasmSuffix;
  window.Module.locateFile = (file) => flavour + "/" + file + (file.endsWith(".wasm") ? wasmSuffix : "");
  // ... and served as text, which streaming compilation refuses: compiled from the bytes instead
  if (wasmSuffix) window.Module.instantiateWasm = (imports, receive) => {
    const file = window.Module.locateFile("explainer.wasm");
    fetch(file).then((r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); return r.arrayBuffer(); })
      .then((bytes) => WebAssembly.instantiate(bytes, imports)).then((r) => receive(r.instance, r.module))
      .catch((e) => fail(`Could not load ${file} (${e.message}): is the content complete?`, `could not load ${file} (${e.message})`));
    return {};
  };
  const script = document.createElement("script");
  script.src = flavour + "/explainer-wasm.js";
  script.onerror = () => fail("Could not load explainer-wasm.js: is the site complete?",
                              "could not load " + flavour + "/explainer-wasm.js");
  document.body.appendChild(script);
})();
