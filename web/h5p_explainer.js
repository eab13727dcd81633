// The H5P content type H5P.AttentionExplainer: the explainer in a frame of its own (its page from page.js,
// its files under the library's explainer/), the checks scored and told to H5P's xAPI dispatcher, and
// H5P's question-type contract. Uses H5P's core only (no H5P.Question, no JoubelUI). Computes nothing.
var H5P = window.H5P = window.H5P || {};
H5P.AttentionExplainer = (function () {
  "use strict";
  const L = window.AttentionLms;
  const LIBRARY = "H5P.AttentionExplainer-1.0";

  function AttentionExplainer(params, contentId, extras) {
    H5P.EventDispatcher.call(this);
    this.params = params || {};
    this.contentId = contentId;
    this.previousState = extras && extras.previousState ? extras.previousState : null;
    const checks = this.params.checks || {};
    this.counted = L.ITEMS.filter((id) => checks[id] !== false);
    const pass = Number(this.params.passPercentage);
    this.passMark = Number.isFinite(pass) ? Math.min(100, Math.max(0, pass)) / 100 : 0.8;
    this.explainer = null;    // the frame's window.attentionExplainer, once ready
    this.summary = null;      // its last getSummary()
    this.finishedOnce = false;
    this.started = Date.now();
  }
  AttentionExplainer.prototype = Object.create(H5P.EventDispatcher.prototype);
  AttentionExplainer.prototype.constructor = AttentionExplainer;

  AttentionExplainer.prototype.attach = function ($container) {
    const container = $container.get ? $container.get(0) : $container;
    container.classList.add("h5p-attention-explainer");
    container.textContent = "";
    const frame = document.createElement("iframe");
    frame.className = "h5p-attention-explainer-frame";
    frame.title = "Self-attention explainer";
    frame.setAttribute("allow", "fullscreen; clipboard-write");
    const height = Number(this.params.height);
    frame.style.height = (Number.isFinite(height) && height >= 360 ? Math.min(height, 2000) : 720) + "px";
    const base = new URL(H5P.getLibraryPath(LIBRARY) + "/explainer/", document.baseURI).href;
    frame.srcdoc = window.AttentionExplainerPage.replace("%BASE%", base.replace(/"/g, "%22"));
    frame.addEventListener("load", () => this.connect(frame.contentWindow), { once: true });
    container.appendChild(frame);
    this.frame = frame;
    this.trigger("resize");
  };

  // The teacher's view, sentence and model, then the learner's saved answers; then each change is heard.
  AttentionExplainer.prototype.connect = function (win) {
    const api = win && win.attentionExplainer;
    if (!api) return;
    api.ready.then(() => {
      this.explainer = api;
      this.applyTeacherSettings();
      if (this.previousState && typeof this.previousState.suspend === "string") {
        const saved = L.decodeSuspend(this.previousState.suspend);
        if (saved.ok) L.restore(api, saved);
      }
      this.summary = api.getSummary();
      this.finishedOnce = this.score().complete;
      this.triggerXAPI("attempted");
      L.follow(api, win, (s, answers) => {
        this.summary = s;
        for (const a of answers) if (this.counted.includes(L.itemOf(a.id))) this.answered(a);
        const sc = this.score();
        if (sc.complete && !this.finishedOnce) {
          this.finishedOnce = true;
          const success = sc.scaled >= this.passMark;
          this.triggerXAPIScored(sc.points, sc.maxPoints, "completed", true, success);
          this.triggerXAPIScored(sc.points, sc.maxPoints, success ? "passed" : "failed", true, success);
        }
      });
      this.trigger("resize");
    }, () => { /* the frame shows why the explainer cannot start */ });
  };
  AttentionExplainer.prototype.applyTeacherSettings = function () {
    const p = this.params, api = this.explainer;
    for (const [key, value] of [["model", p.model], ["sentence", p.sentence], ["view", p.view]]) {
      if (typeof value !== "string" || value.trim() === "" || (key === "model" && value === "handmade")) continue;
      try { api.setState({ [key]: value.trim() }); } catch (e) { console.warn(`attention explainer (H5P): ${key} ignored: ${e.message}`); }
    }
  };

  // One check answered: its own activity under this content (subContentId), its result and latency.
  AttentionExplainer.prototype.answered = function (a) {
    const event = this.createXAPIEventTemplate("answered");
    const st = event.data.statement;
    const mainId = st.object.id;
    const ours = L.statements({ actor: st.actor, activityId: mainId }).answered(a, a.check, a.ms);
    st.object = { ...ours.object, id: mainId + (mainId.includes("?") ? "&" : "?") + "subContentId=check-" + encodeURIComponent(a.id) };
    st.result = ours.result;
    st.context = st.context || {};
    st.context.contextActivities = { ...(st.context.contextActivities || {}), parent: [{ id: mainId, objectType: "Activity" }] };
    this.trigger(event);
  };

  AttentionExplainer.prototype.score = function () {
    return L.score(this.summary ? this.summary.progress : null, this.counted);
  };

  // [H5P's question-type contract]
  AttentionExplainer.prototype.getScore = function () { return this.score().points; };
  AttentionExplainer.prototype.getMaxScore = function () { return L.DERIVE_CELLS * this.counted.length; };
  AttentionExplainer.prototype.getAnswerGiven = function () {
    const progress = this.summary && this.summary.progress;
    return !!progress && this.counted.some((id) => progress[id] && progress[id].answered > 0);
  };
  /** Derive's numbers shown in every stage (a view's check shows its why once answered). */
  AttentionExplainer.prototype.showSolutions = function () {
    if (this.explainer) this.explainer.setState({ derive_revealed: 6 });
  };
  AttentionExplainer.prototype.resetTask = function () {
    this.finishedOnce = false;
    this.previousState = null;
    if (!this.explainer) return;
    this.explainer.setState({ checks: {}, checklist: 0 });
    this.applyTeacherSettings();
    this.summary = this.explainer.getSummary();
  };
  AttentionExplainer.prototype.getXAPIData = function () {
    const event = this.createXAPIEventTemplate("answered");
    const sc = this.score();
    event.setScoredResult(sc.points, sc.maxPoints, this, sc.complete, sc.scaled >= this.passMark);
    return { statement: event.data.statement };
  };
  AttentionExplainer.prototype.getCurrentState = function () {
    if (!this.summary) return this.previousState || undefined;
    const s = this.summary;
    return { suspend: L.encodeSuspend({ place: L.placeOf(s), ticks: s.checklist, checks: s.checks }, 64000) };
  };
  AttentionExplainer.prototype.getTitle = function () {
    return (this.params.metadata && this.params.metadata.title) || "Self-attention explainer";
  };

  return AttentionExplainer;
})();
