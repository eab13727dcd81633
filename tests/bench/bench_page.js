// The benchmark page's side (bench.html): sets up the explainer (in an iframe) and the peers,
// then times every implementation of one attention shape in interleaved rounds, so the load of a
// shared machine falls on all of them alike. Driven by bench.mjs through window.bench*.
// Not a test: it measures, it does not judge.
"use strict";

(function () {
  const status = (text) => { document.getElementById("status").textContent = text; };
  const MIN_SAMPLE_MS = 5;  // a sample is a batch of calls lasting at least this long (coarse timers)

  let app = null;        // the explainer's window.attentionExplainer
  let appModule = null;  // its Emscripten Module (pauseMainLoop/resumeMainLoop)
  let webgl = "absent";  // "bench" | "compute" | "absent"
  const info = {};

  // A deterministic uniform(-1, 1) fill (the same inputs for every peer of a shape).
  function randomArray(n, seed) {
    const out = new Float32Array(n);
    let s = seed >>> 0;
    for (let i = 0; i < n; ++i) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      out[i] = (s / 4294967296) * 2 - 1;
    }
    return out;
  }

  function median(values) {
    const v = [...values].sort((a, b) => a - b);
    const m = v.length >> 1;
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  function decodeBase64(text) {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; ++i) out[i] = bin.charCodeAt(i);
    return out;
  }

  async function setupApp(appUrl) {
    const frame = document.getElementById("app");
    await new Promise((resolve, reject) => {
      frame.onload = resolve;
      frame.onerror = reject;
      frame.src = appUrl;
    });
    const win = frame.contentWindow;
    const deadline = performance.now() + 60000;
    while (!win.attentionExplainer && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!win.attentionExplainer) throw new Error("the explainer did not start in the iframe");
    await win.attentionExplainer.ready;
    app = win.attentionExplainer;
    appModule = win.Module;
    info.app_bench = typeof app.bench === "function";
    if (!info.app_bench) throw new Error("attentionExplainer.bench is missing: build the site with the bench export");
    // webgl: through bench() if the kernel layer knows it, else through compute() (JSON included)
    try {
      app.bench({ T: 8, d: 8, causal: false, backend: "webgl", reps: 1 });
      webgl = "bench";
    } catch (e) {
      try {
        app.compute({ Q: [[1, 0]], K: [[1, 0]], V: [[1, 0]], backend: "webgl" });
        webgl = "compute";
      } catch (e2) {
        webgl = "absent";
        info.webgl_reason = String(e2.message || e2);
      }
    }
    info.webgl = webgl;
  }

  async function setupPeers() {
    const ortDir = new URL("node_modules/onnxruntime-web/dist/", location.href).href;
    ort.env.wasm.wasmPaths = ortDir;
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    info.ort_version = ort.env.versions ? ort.env.versions.web || ort.env.versions.common : "?";
    const tfDir = new URL("node_modules/@tensorflow/tfjs-backend-wasm/dist/", location.href).href;
    tf.wasm.setWasmPaths(tfDir);
    if (typeof tf.wasm.setThreadsCount === "function") tf.wasm.setThreadsCount(1);
    if (!(await tf.setBackend("wasm"))) throw new Error("tfjs: the wasm backend did not start");
    await tf.ready();
    info.tf_version = tf.version_core;
    info.tf_backend = tf.getBackend();
    info.tf_simd = await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT");
    info.tf_threads = await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT");
    info.cross_origin_isolated = self.crossOriginIsolated;
    info.hardware_concurrency = navigator.hardwareConcurrency;
    info.user_agent = navigator.userAgent;
  }

  window.benchSetup = async ({ appUrl }) => {
    status("starting the explainer…");
    await setupApp(appUrl);
    status("starting the peers…");
    await setupPeers();
    status("ready");
    return info;
  };

  // One implementation of a shape: { name, prepare() (async, optional), run() -> ms or undefined,
  // selfTimed (run returns the per-call ms itself), dispose() }.
  async function makeImpls({ T, d, causal, backends, onnx, withWebgl }) {
    const impls = [];
    for (const backend of backends)
      impls.push({ name: backend, selfTimed: true, run: () => app.bench({ T, d, causal, backend, reps: 1 }) });
    if (withWebgl && webgl === "bench")
      impls.push({ name: "webgl", selfTimed: true, run: () => app.bench({ T, d, causal, backend: "webgl", reps: 1 }) });
    if (withWebgl && webgl === "compute" && T <= 256) {
      const rows = (a) => Array.from({ length: T }, (_, i) => Array.from(a.subarray(i * d, (i + 1) * d)));
      const request = JSON.stringify({ Q: rows(randomArray(T * d, 1)), K: rows(randomArray(T * d, 2)),
        V: rows(randomArray(T * d, 3)), causal, backend: "webgl" });
      impls.push({ name: "webgl", note: "through compute(): JSON in and out included", run: () => { app.compute(request); } });
    }
    const q = randomArray(T * d, 11), k = randomArray(T * d, 12), v = randomArray(T * d, 13);
    // onnxruntime-web: the explicit graph and the opset-23 Attention op
    for (const [form, b64] of Object.entries(onnx)) {
      const name = `ort-${form}`;
      try {
        const session = await ort.InferenceSession.create(decodeBase64(b64),
          { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
        const dims = form === "attention" ? [1, 1, T, d] : [T, d];
        const feeds = { Q: new ort.Tensor("float32", q, dims), K: new ort.Tensor("float32", k, dims),
          V: new ort.Tensor("float32", v, dims) };
        const outName = session.outputNames[0];
        impls.push({ name, async run() { const r = await session.run(feeds); impls.lastOut[name] = r[outName].data; },
          dispose: () => session.release() });
      } catch (e) {
        impls.failed = impls.failed || {};
        impls.failed[name] = String(e.message || e).slice(0, 300);
      }
    }
    // tfjs wasm, its fastest form: Q scaled (T x d, not the T x T scores), matMul(Q, transpose(K))
    // (matMul(Q, K, false, true) is several times slower), [+ mask], softmax, matMul with V; read back
    const tq = tf.tensor2d(q, [T, d]), tk = tf.tensor2d(k, [T, d]), tv = tf.tensor2d(v, [T, d]);
    let mask = null;
    if (causal) {
      const m = new Float32Array(T * T);
      for (let i = 0; i < T; ++i) for (let j = i + 1; j < T; ++j) m[i * T + j] = -Infinity;
      mask = tf.tensor2d(m, [T, T]);
    }
    const scale = tf.scalar(1 / Math.sqrt(d));
    impls.push({
      name: "tfjs",
      run() {
        const out = tf.tidy(() => {
          let s = tf.matMul(tf.mul(tq, scale), tf.transpose(tk));
          if (mask) s = tf.add(s, mask);
          return tf.matMul(tf.softmax(s), tv);
        });
        impls.lastOut.tfjs = out.dataSync();
        out.dispose();
      },
      dispose() { tf.dispose([tq, tk, tv, scale]); if (mask) mask.dispose(); },
    });
    impls.lastOut = {};
    return impls;
  }

  async function sampleOnce(impl, batch) {
    if (impl.selfTimed) return impl.run();  // the kernel times itself in batches (bench())
    const t0 = performance.now();
    for (let i = 0; i < batch; ++i) await impl.run();
    return (performance.now() - t0) / batch;
  }

  // Times every implementation of one shape; rounds rotate the order. Returns medians per name.
  window.benchShape = async (cfg) => {
    const { T, d, causal, minRounds = 3, maxRounds = 15, budgetMs = 8000 } = cfg;
    status(`T=${T} d=${d} causal=${causal}`);
    if (appModule && appModule.pauseMainLoop) appModule.pauseMainLoop();  // no app frames while timing
    const impls = await makeImpls(cfg);
    const samples = {}, batches = {}, errors = { ...(impls.failed || {}) };
    let live = impls.slice();
    try {
      for (const impl of impls) {  // warm-up (compilation, allocation) and batch size
        try {
          await sampleOnce(impl, 1);
          const t0 = performance.now();
          const est = impl.selfTimed ? await impl.run() : (await sampleOnce(impl, 1), performance.now() - t0);
          batches[impl.name] = impl.selfTimed ? 1 : Math.max(1, Math.ceil(MIN_SAMPLE_MS / Math.max(est, 1e-3)));
          samples[impl.name] = [];
        } catch (e) {
          errors[impl.name] = String(e.message || e).slice(0, 300);
          live = live.filter((x) => x !== impl);
        }
      }
      // the peers must agree with each other (a wrong graph would be timed for nothing)
      const outs = Object.entries(impls.lastOut);
      let agreement = null;
      if (outs.length > 1) {
        const [, ref] = outs[0];
        agreement = 0;
        for (const [, o] of outs.slice(1))
          for (let i = 0; i < ref.length; i += 7) agreement = Math.max(agreement, Math.abs(o[i] - ref[i]));
      }
      const start = performance.now();
      for (let round = 0; round < maxRounds; ++round) {
        if (round >= minRounds && performance.now() - start > budgetMs) break;
        const order = live.map((_, i) => live[(i + round) % live.length]);
        for (const impl of order) samples[impl.name].push(await sampleOnce(impl, batches[impl.name]));
        await new Promise((r) => setTimeout(r, 0));
      }
      const result = { T, d, causal, impls: {}, errors, peer_max_abs_diff: agreement };
      for (const impl of live) {
        const s = samples[impl.name];
        result.impls[impl.name] = { ms: median(s), min_ms: Math.min(...s), samples: s.length, batch: batches[impl.name],
          ...(impl.note ? { note: impl.note } : {}) };
      }
      return result;
    } finally {
      for (const impl of impls) if (impl.dispose) impl.dispose();
      if (appModule && appModule.resumeMainLoop) appModule.resumeMainLoop();
    }
  };
})();
