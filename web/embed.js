// The embed loader for course pages: <script src=".../embed.js"></script> turns every
// <div data-attention-explainer data-view="library" data-sentence="..."></div> into a sized iframe
// of the explainer and relays its postMessage API. Not the explainer: it only mounts and talks to it.
(function () {
  "use strict";
  const PREFIX = "attention-explainer:";
  const script = document.currentScript;
  const base = new URL(".", script ? script.src : location.href);  // where index.html lives
  // The loader's own data- attributes; every other one is an input of the explainer (data-kv-sentence
  // -> ?kv_sentence=), checked by the explainer against its table of inputs (unknown: a warning).
  const OWN_DATA = new Set(["attentionExplainer", "title", "height", "timeout"]);
  // How long, after its page has loaded, a frame may take to start before `ready` rejects
  // (data-timeout="ms" to change it); a request without an answer for as long rejects too.
  const DEFAULT_TIMEOUT_MS = 20000;
  const paramName = (key) => key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

  class Explainer {
    constructor(host) {
      this.host = host;
      this.listeners = new Set();
      this.progressListeners = new Set();
      this.pending = new Map();
      this.nextId = 1;
      const url = new URL("index.html", base);
      for (const [key, value] of Object.entries(host.dataset))
        if (!OWN_DATA.has(key)) url.searchParams.set(paramName(key), value);
      url.searchParams.set("embed", "1");
      url.searchParams.set("origin", location.origin);
      this.origin = url.origin;
      this.timeoutMs = Number(host.dataset.timeout) > 0 ? Number(host.dataset.timeout) : DEFAULT_TIMEOUT_MS;
      this.ready = new Promise((resolve, reject) => { this.resolveReady = resolve; this.rejectReady = reject; });
      this.ready.catch(() => {});  // fail() says it on the console; a page that awaits ready gets the Error
      if (url.protocol === "file:") {
        // Browsers do not let a page from file:// fetch the explainer's WebAssembly and font.
        const message = `the explainer at ${url.href} is a file: it must be served over http(s) ` +
          "(e.g. ./build_wasm.sh serve, or any static web server), since browsers do not load WebAssembly from file://";
        const note = document.createElement("p");
        note.textContent = "Self-attention explainer: " + message;
        note.setAttribute("role", "alert");
        host.appendChild(note);
        this.fail(message);
        return;
      }
      const frame = document.createElement("iframe");
      frame.src = url.href;
      frame.title = host.dataset.title || "Self-attention explainer";
      frame.loading = "lazy";
      frame.allow = "clipboard-write";
      frame.style.cssText = "display:block;width:100%;border:0;border-radius:6px;background:#17191e;";
      this.frame = frame;
      // The clock starts when the frame's page has loaded (a lazy frame below the fold loads late).
      frame.addEventListener("load", () => {
        if (!this.settled) this.startTimer = setTimeout(() => this.fail(`the explainer did not start within ` +
          `${this.timeoutMs / 1000} s of its page loading (${url.origin + url.pathname})`), this.timeoutMs);
      });
      host.appendChild(frame);
      this.resize();
    }
    // `ready` rejects with the reason, and so does every request waiting for an answer and any later one.
    fail(reason) {
      if (this.settled) return;
      this.settled = true;
      this.error = new Error(reason);
      clearTimeout(this.startTimer);
      console.error("attention explainer: " + reason);
      this.rejectReady(this.error);
      for (const { reject, timer } of this.pending.values()) { clearTimeout(timer); reject(this.error); }
      this.pending.clear();
    }
    // Width follows the container; height is data-height (px) or 3/4 of the width, at least 240.
    resize() {
      const fixed = Number(this.host.dataset.height);
      const width = this.host.clientWidth || 800;
      this.frame.style.height = (fixed > 0 ? fixed : Math.max(240, Math.round(width * 0.75))) + "px";
    }
    receive(message) {
      if (message.type === PREFIX + "ready") {
        if (this.settled) return;
        this.settled = true;
        clearTimeout(this.startTimer);
        this.state = message.state;
        this.resolveReady(this);
        return;
      }
      if (message.type === PREFIX + "failed") { this.fail("the explainer could not start: " + message.error); return; }
      if (message.type === PREFIX + "progress") {
        const { exercise, correct, total, answered, passed } = message;
        if (typeof exercise !== "string" || !Number.isInteger(correct) || !Number.isInteger(total)) return;
        for (const fn of this.progressListeners) fn({ exercise, correct, total, answered, passed });
        return;
      }
      if (message.type === PREFIX + "changed") {
        this.state = message.state;
        for (const fn of this.listeners) fn(message.state);
        return;
      }
      if (message.type === PREFIX + "reply" && this.pending.has(message.id)) {
        const { resolve, reject, timer } = this.pending.get(message.id);
        clearTimeout(timer);
        this.pending.delete(message.id);
        if (message.ok) resolve(message.state); else reject(new Error(message.error));
      }
    }
    request(type, body) {
      return this.ready.then(() => new Promise((resolve, reject) => {
        if (this.error) { reject(this.error); return; }
        const id = this.nextId++;
        const timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error(`${type}: no answer from the explainer within ${this.timeoutMs / 1000} s`));
        }, this.timeoutMs);
        this.pending.set(id, { resolve, reject, timer });
        this.frame.contentWindow.postMessage({ type: PREFIX + type, id, ...body }, this.origin);
      }));
    }
    /** Resolves with the explainer's state (inputs and results). */
    getState() { return this.request("getState", {}); }
    /** Changes inputs; rejects with an Error naming the key when a value is invalid. */
    setState(state) { return this.request("setState", { state }); }
    /** Calls fn(state) after every change made inside the explainer or through setState. */
    onChange(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
    /** Calls fn({exercise, correct, total, answered, passed}) after each answer the learner gives
     *  (a view's check question, or Derive's typed cells: exercise "derive"); returns an unsubscribe. */
    onProgress(fn) { this.progressListeners.add(fn); return () => this.progressListeners.delete(fn); }
  }

  const mounted = [];
  function mountAll(root = document) {
    for (const host of root.querySelectorAll("[data-attention-explainer]")) {
      if (host.attentionExplainer) continue;
      host.attentionExplainer = new Explainer(host);
      mounted.push(host.attentionExplainer);
    }
    return mounted;
  }
  // One listener for all frames: only messages from one of our iframes, with a well-formed body.
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || typeof m !== "object" || typeof m.type !== "string" || !m.type.startsWith(PREFIX)) return;
    const target = mounted.find((e) => e.frame && e.frame.contentWindow === event.source && e.origin === event.origin);
    if (target) target.receive(m);
  });
  window.addEventListener("resize", () => mounted.forEach((e) => e.frame && e.resize()));
  window.AttentionExplainerEmbed = { mountAll, mounted };
  // Mount what is already parsed now (so a script right after can use host.attentionExplainer),
  // and whatever comes later in the page once it is all there.
  mountAll();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
})();
