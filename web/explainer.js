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
    const text = Module.ccall(name, "string", arg === undefined ? [] : ["string"], arg === undefined ? [] : [arg]);
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
  window.attentionExplainer = api;

  // URL parameters -> inputs. Each is applied on its own, so one bad value only warns.
  const BOOLEAN_PARAMS = ["causal", "scale", "cross", "library_best_only"];
  const STRING_PARAMS = ["view", "sentence", "kv_sentence", "mistake"];
  function paramValue(key, raw) {
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
    if (STRING_PARAMS.includes(key)) return raw;
    return undefined;
  }
  function applyUrlParameters() {
    const params = new URLSearchParams(window.location.search);
    const ordered = [...params.keys()].sort((a, b) => (a === "token") - (b === "token"));  // token last
    for (const key of ordered) {
      try {
        const value = paramValue(key, params.get(key));
        if (value === undefined) { console.warn(`attention explainer: unknown URL parameter "${key}" ignored`); continue; }
        api.setState({ [key]: value });
      } catch (e) {
        console.warn(`attention explainer: URL parameter ignored: ${e.message}`);
      }
    }
  }

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

  window.Module = {
    canvas,
    print: (text) => console.log(text),
    printErr: (text) => console.warn(text),
    locateFile: (path) => path,  // relative to the page: works from any folder or host
    postRun: [() => { running = true; applyUrlParameters(); }],
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

  const script = document.createElement("script");
  script.src = "explainer-wasm.js";
  script.onerror = () => showError("Could not load explainer-wasm.js: is the site complete?");
  document.body.appendChild(script);
})();
