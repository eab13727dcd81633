// The page glue: feature checks, loading state, URL parameters, and window.attentionExplainer
// (ready, getState, setState, compute) over the functions the wasm exports. Computes nothing itself.
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
    getState() { return call("attn_get_state").state; },
    /** Changes inputs; an invalid value throws an Error that names the key. Returns the new state. */
    setState(partial) {
      if (partial === null || typeof partial !== "object" || Array.isArray(partial))
        throw new Error("setState takes an object, e.g. {view: 'weights'}");
      call("attn_set_state", JSON.stringify(partial));
      return api.getState();
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

  // The address bar follows the inputs (a permalink at any moment); defaults are left out.
  const DEFAULTS = { view: "flow", sentence: "The animal didn't cross the street because it was tired", token: "it",
    causal: false, scale: true, temperature: 1, cross: false, kv_sentence: "The tired animal slept under a tree",
    mistake: "none", backend: "auto", cost_T: 2048 };
  function permalinkSearch(state) {
    const params = new URLSearchParams();
    const current = { view: state.view, sentence: state.sentence, token: state.token_text, causal: state.causal,
      scale: state.scale, temperature: Math.round(state.temperature * 1000) / 1000, cross: state.cross,
      kv_sentence: state.kv_sentence, mistake: state.mistake, backend: state.backend, cost_T: state.cost_T };
    for (const [key, value] of Object.entries(current)) {
      if (key === "kv_sentence" && !state.cross) continue;
      if (value === DEFAULTS[key]) continue;
      params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
    }
    const text = params.toString();
    return text ? "?" + text : "";
  }
  // The inputs and tokens with the selected query's row of weights: the light part of getState().
  const summaryState = () => call("attn_get_summary").state;
  api.permalink = () => location.origin + location.pathname + permalinkSearch(summaryState());

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

  const CHECKLIST_KEY = "attention-explainer:checklist";
  function storedChecklist() {
    try { const v = Number(localStorage.getItem(CHECKLIST_KEY)); return Number.isInteger(v) && v >= 0 && v <= 0xffff ? v : 0; }
    catch (e) { return 0; }  // storage blocked (private mode, sandboxed iframe): nothing to restore
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

  let announceTimer = 0, addressTimer = 0, storedChecklistValue;
  function stateChanged() {
    const state = summaryState();
    const summary = summarise(state);
    if (summaryBox.textContent !== summary) summaryBox.textContent = summary;
    if (state.checklist !== storedChecklistValue) {
      storedChecklistValue = state.checklist;
      try { localStorage.setItem(CHECKLIST_KEY, String(state.checklist)); } catch (e) { /* storage blocked */ }
    }
    if (!state.embed) {
      // A slider drag changes the state every frame; history.replaceState costs ~3 ms in Chromium,
      // which also throttles pages that call it too often: the address bar follows 200 ms later.
      const search = permalinkSearch(state);
      clearTimeout(addressTimer);
      addressTimer = setTimeout(() => {
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

  // URL parameters -> inputs. Each is applied on its own, so one bad value only warns.
  const BOOLEAN_PARAMS = ["causal", "scale", "cross", "library_best_only", "embed", "reduced_motion"];
  const STRING_PARAMS = ["view", "sentence", "kv_sentence", "mistake", "theme", "backend"];
  const PAGE_PARAMS = ["origin"];  // read by the page itself (the embedding page's origin)
  function paramValue(key, raw) {
    if (key === "views") return raw.split(",").map((v) => v.trim()).filter(Boolean);
    if (BOOLEAN_PARAMS.includes(key)) {
      if (["1", "true", "on", "yes"].includes(raw)) return true;
      if (["0", "false", "off", "no"].includes(raw)) return false;
      throw new Error(key + ": must be 1/0 or true/false");
    }
    if (key === "temperature") {
      const v = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(v)) throw new Error("temperature: must be a number");
      return v;
    }
    if (key === "token") return /^\d+$/.test(raw) ? Number(raw) : raw;
    if (key === "cost_T") {
      if (!/^\d+$/.test(raw)) throw new Error("cost_T: must be a whole number");
      return Number(raw);
    }
    if (STRING_PARAMS.includes(key)) return raw;
    return undefined;
  }
  function applyUrlParameters() {
    const params = new URLSearchParams(window.location.search);
    const ordered = [...params.keys()].sort((a, b) => (a === "token") - (b === "token"));  // token last
    for (const key of ordered) {
      try {
        if (PAGE_PARAMS.includes(key)) continue;
        const value = paramValue(key, params.get(key));
        if (value === undefined) { console.warn(`attention explainer: unknown URL parameter "${key}" ignored`); continue; }
        api.setState({ [key]: value });
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
    const active = () => window.parent !== window && !!parentOrigin && /^https?:\/\/[^/]+$/.test(parentOrigin);
    const send = (message) => { if (active()) window.parent.postMessage(message, parentOrigin); };
    function handle(event) {
      if (event.source !== window.parent || event.origin !== parentOrigin) return;  // not our embedding page
      const m = event.data;
      if (!m || typeof m !== "object" || typeof m.type !== "string" || !m.type.startsWith(PREFIX)) return;
      const id = typeof m.id === "number" || typeof m.id === "string" ? m.id : null;
      const reply = (body) => send({ type: PREFIX + "reply", id, ...body });
      try {
        if (m.type === PREFIX + "getState") reply({ ok: true, state: api.getState() });
        else if (m.type === PREFIX + "setState") {
          if (!m.state || typeof m.state !== "object" || Array.isArray(m.state)) throw new Error("state: must be an object");
          reply({ ok: true, state: api.setState(m.state) });
        } else reply({ ok: false, error: "unknown message type " + m.type });
      } catch (e) {
        reply({ ok: false, error: e.message });
      }
    }
    return {
      active,
      listen() { if (active()) { window.addEventListener("message", handle); send({ type: PREFIX + "ready", state: api.getState() }); } },
      announce(state) { send({ type: PREFIX + "changed", state }); },
    };
  })();

  // Feature checks before downloading anything.
  const gl = document.createElement("canvas").getContext("webgl2");
  if (!gl) {
    showError("This explainer needs WebGL2, which this browser does not offer (or has turned off). " +
              "Try a current Firefox, Chrome, Edge or Safari, or enable hardware acceleration.");
    rejectReady(new Error("WebGL2 is not available"));
    ready.catch(() => {});
    return;
  }
  if (typeof WebAssembly !== "object") {
    showError("This explainer needs WebAssembly, which this browser does not offer.");
    rejectReady(new Error("WebAssembly is not available"));
    ready.catch(() => {});
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
    canvasCssSize: null,  // [width, height] in CSS pixels, kept by the observer below
    print: (text) => console.log(text),
    printErr: (text) => console.warn(text),
    preRun: [() => {
      Module.addRunDependency("ui_font.ttf");
      font.then((bytes) => {
        Module.FS_createDataFile("/", "ui_font.ttf", new Uint8Array(bytes), true, false, false);
        Module.removeRunDependency("ui_font.ttf");
      }, (e) => {
        showError("Could not load the font ui_font.ttf (" + e.message + "): is the site complete?");
        rejectReady(new Error("could not load ui_font.ttf"));
      });
    }],
    postRun: [() => {
      running = true;
      const checklist = storedChecklist();
      if (checklist) api.setState({ checklist });
      // The learner's system settings first; URL parameters may override them.
      const prefers = (query) => window.matchMedia && window.matchMedia(query).matches;
      api.setState({ reduced_motion: prefers("(prefers-reduced-motion: reduce)"),
        theme: prefers("(prefers-color-scheme: light)") ? "light" : "dark" });
      applyUrlParameters();
      if (summaryState().embed) openFull.classList.remove("hidden");
      embedBridge.listen();
      stateChanged();
    }],
    // Coalesces bursts (a slider drag) into one announcement per animation frame.
    onStateChanged: () => {
      if (!announceTimer) announceTimer = requestAnimationFrame(() => { announceTimer = 0; stateChanged(); });
    },
    downloadText: (name, mime, text) => download(name, new Blob([text], { type: mime })),
    downloadWeightsPng: () => weightsPng().then((blob) => download("attention-weights.png", blob)),
    copyPermalink: () => window.Module.copyText(api.permalink()),
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
      resolveReady(api);
    },
    onAbort: (what) => {
      showError("The explainer stopped unexpectedly (" + what + "). Reloading the page usually helps.");
      rejectReady(new Error(String(what)));
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
  window.Module.locateFile = (file) => flavour + "/" + file;
  const script = document.createElement("script");
  script.src = flavour + "/explainer-wasm.js";
  script.onerror = () => showError("Could not load explainer-wasm.js: is the site complete?");
  document.body.appendChild(script);
})();
