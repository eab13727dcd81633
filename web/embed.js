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
  const OWN_DATA = new Set(["attentionExplainer", "title", "height"]);
  const paramName = (key) => key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

  class Explainer {
    constructor(host) {
      this.host = host;
      this.listeners = new Set();
      this.pending = new Map();
      this.nextId = 1;
      const url = new URL("index.html", base);
      for (const [key, value] of Object.entries(host.dataset))
        if (!OWN_DATA.has(key)) url.searchParams.set(paramName(key), value);
      url.searchParams.set("embed", "1");
      url.searchParams.set("origin", location.origin);
      this.origin = url.origin;
      const frame = document.createElement("iframe");
      frame.src = url.href;
      frame.title = host.dataset.title || "Self-attention explainer";
      frame.loading = "lazy";
      frame.allow = "clipboard-write";
      frame.style.cssText = "display:block;width:100%;border:0;border-radius:6px;background:#17191e;";
      this.frame = frame;
      this.ready = new Promise((resolve) => { this.resolveReady = resolve; });
      host.appendChild(frame);
      this.resize();
    }
    // Width follows the container; height is data-height (px) or 3/4 of the width, at least 240.
    resize() {
      const fixed = Number(this.host.dataset.height);
      const width = this.host.clientWidth || 800;
      this.frame.style.height = (fixed > 0 ? fixed : Math.max(240, Math.round(width * 0.75))) + "px";
    }
    receive(message) {
      if (message.type === PREFIX + "ready") { this.state = message.state; this.resolveReady(this); return; }
      if (message.type === PREFIX + "changed") {
        this.state = message.state;
        for (const fn of this.listeners) fn(message.state);
        return;
      }
      if (message.type === PREFIX + "reply" && this.pending.has(message.id)) {
        const { resolve, reject } = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.ok) resolve(message.state); else reject(new Error(message.error));
      }
    }
    request(type, body) {
      return this.ready.then(() => new Promise((resolve, reject) => {
        const id = this.nextId++;
        this.pending.set(id, { resolve, reject });
        this.frame.contentWindow.postMessage({ type: PREFIX + type, id, ...body }, this.origin);
      }));
    }
    /** Resolves with the explainer's state (inputs and results). */
    getState() { return this.request("getState", {}); }
    /** Changes inputs; rejects with an Error naming the key when a value is invalid. */
    setState(state) { return this.request("setState", { state }); }
    /** Calls fn(state) after every change made inside the explainer or through setState. */
    onChange(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
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
    const target = mounted.find((e) => e.frame.contentWindow === event.source && e.origin === event.origin);
    if (target) target.receive(m);
  });
  window.addEventListener("resize", () => mounted.forEach((e) => e.resize()));
  window.AttentionExplainerEmbed = { mountAll, mounted };
  // Mount what is already parsed now (so a script right after can use host.attentionExplainer),
  // and whatever comes later in the page once it is all there.
  mountAll();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
})();
