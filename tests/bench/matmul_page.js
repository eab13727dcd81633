// The benchmark page's matrix-product side (bench.html, after bench_page.js): times our matmul
// (attentionExplainer.benchMatmul) and onnxruntime-web's Gemm / MatMul on one shape in interleaved
// rounds. Driven by matmul_bench.mjs through window.benchMatmulShape. Not a test: it measures.
"use strict";

(function () {
  const MIN_SAMPLE_MS = 5;  // a sample is a batch of calls lasting at least this long
  const sessions = new Map();  // model URL -> ORT session, kept across T (the models take any T)

  function randomArray(n, seed) {  // uniform(-1, 1), deterministic
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

  function explainer() {
    const win = document.getElementById("app").contentWindow;
    return { app: win.attentionExplainer, module: win.Module };
  }

  async function session(url) {
    if (!sessions.has(url))
      sessions.set(url, await ort.InferenceSession.create(url, { executionProviders: ["wasm"], graphOptimizationLevel: "all" }));
    return sessions.get(url);
  }

  /** Releases the ORT sessions of the previous shape (their weights can be 150 MB). */
  window.matmulRelease = async () => {
    for (const s of sessions.values()) await s.release();
    sessions.clear();
  };

  /** One shape: {M, K, N, layout ("NN" | "NT"), bias, models: {form: {url, constB, transB, bias}},
   *  backends, minRounds, maxRounds, budgetMs} -> {impls: {name: {ms, ...}}, errors, peer_max_abs_diff}. */
  window.benchMatmulShape = async (cfg) => {
    const { M, K, N, layout, bias, models, backends, minRounds = 3, maxRounds = 15, budgetMs = 4000 } = cfg;
    document.getElementById("status").textContent = `matmul ${M} x ${K} x ${N} ${layout}`;
    const { app, module } = explainer();
    if (!app || typeof app.benchMatmul !== "function") throw new Error("attentionExplainer.benchMatmul is missing");
    if (module && module.pauseMainLoop) module.pauseMainLoop();
    const impls = [], errors = {}, lastOut = {};
    for (const backend of backends)
      impls.push({ name: backend, selfTimed: true, run: () => app.benchMatmul({ M, K, N, layout, bias, backend, reps: 1 }) });
    const a = randomArray(M * K, 21);
    let bInput = null;
    const c = randomArray(N, 23);
    for (const [form, m] of Object.entries(models)) {
      const name = `ort-${form}`;
      try {
        const s = await session(m.url);
        const feeds = { A: new ort.Tensor("float32", a, [M, K]) };
        if (!m.constB) {
          bInput = bInput || randomArray(K * N, 22);
          feeds.B = new ort.Tensor("float32", bInput, m.transB ? [N, K] : [K, N]);
        }
        if (m.bias) feeds.C = new ort.Tensor("float32", c, [N]);
        const out = s.outputNames[0];
        impls.push({ name, async run() { const r = await s.run(feeds); lastOut[name] = r[out].data; } });
      } catch (e) {
        errors[name] = String(e.message || e).slice(0, 300);
      }
    }
    const samples = {}, batches = {};
    let live = impls.slice();
    const sampleOnce = async (impl, batch) => {
      if (impl.selfTimed) return impl.run();
      const t0 = performance.now();
      for (let i = 0; i < batch; ++i) await impl.run();
      return (performance.now() - t0) / batch;
    };
    try {
      for (const impl of impls) {  // warm-up and batch size
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
      // ORT's forms with b as an input in the same layout compute the same thing: they must agree
      // (a wrong graph would be timed for nothing)
      let agreement = null;
      const inputForms = Object.entries(lastOut).filter(([n]) => !models[n.slice(4)].constB);
      const same = inputForms.filter(([n]) => models[n.slice(4)].transB === models[inputForms[0][0].slice(4)].transB);
      if (same.length > 1) {
        agreement = 0;
        for (const [, o] of same.slice(1))
          for (let i = 0; i < o.length; i += 13) agreement = Math.max(agreement, Math.abs(o[i] - same[0][1][i]));
      }
      const start = performance.now();
      for (let round = 0; round < maxRounds; ++round) {
        if (round >= minRounds && performance.now() - start > budgetMs) break;
        const order = live.map((_, i) => live[(i + round) % live.length]);
        for (const impl of order) samples[impl.name].push(await sampleOnce(impl, batches[impl.name]));
        await new Promise((r) => setTimeout(r, 0));
      }
      const result = { M, K, N, layout, bias, impls: {}, errors, peer_max_abs_diff: agreement };
      for (const impl of live) {
        const s = samples[impl.name];
        result.impls[impl.name] = { ms: median(s), min_ms: Math.min(...s), samples: s.length, batch: batches[impl.name] };
      }
      return result;
    } finally {
      if (module && module.resumeMainLoop) module.resumeMainLoop();
    }
  };
})();
