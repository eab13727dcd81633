// The course-site adapter of the packages' launch page (web/lms.html, never the plain site): finds the
// LMS's SCORM 1.2 or 2004 API (or an LRS named in an xAPI launch URL), and reports each checked answer,
// the score, the statuses, the time and the learner's place in that standard's terms. Computes nothing.
(function () {
  "use strict";
  const L = window.AttentionLms;
  const html = document.documentElement;
  const kind = html.dataset.lms;  // "scorm12" | "scorm2004" | "xapi" (written by ./build_wasm.sh package)
  const PASS_MARK = Number(html.dataset.passMark || "0.8");  // xAPI only: SCORM's comes from the LMS
  const SUSPEND_LIMIT = kind === "scorm12" ? 4096 : 64000;
  const status = { kind, mode: "searching", problems: [], sent: 0 };
  window.attentionLms = status;  // what the adapter found and what failed, for the curious (and the tests)

  // [Notice] What failed, said once on screen (a live region, so screen readers hear it too).
  let noticeBox = null;
  const said = new Set();
  function notice(key, text) {
    status.problems.push(key);
    if (said.has(key)) return;
    said.add(key);
    if (!noticeBox) {
      noticeBox = document.createElement("div");
      noticeBox.id = "lms-notice";
      noticeBox.setAttribute("role", "status");
      const close = Object.assign(document.createElement("button"), { type: "button", textContent: "×" });
      close.setAttribute("aria-label", "Dismiss");
      close.addEventListener("click", () => noticeBox.classList.add("hidden"));
      noticeBox.append(Object.assign(document.createElement("span"), { className: "lms-notice-text" }), close);
      document.body.appendChild(noticeBox);
    }
    const line = noticeBox.querySelector(".lms-notice-text");
    line.textContent = line.textContent ? line.textContent + " " + text : text;
    noticeBox.classList.remove("hidden");
  }

  // [xAPI launch] endpoint, auth and actor leave the address bar at once (before the explainer reads its
  // parameters and before anything could copy the address); the page's Referer is off (lms.html).
  const XAPI_PARAMS = ["endpoint", "auth", "actor", "registration", "activity_id", "content_token", "grouping", "activity_platform"];
  let launch = null;
  if (kind === "xapi") {
    const params = new URLSearchParams(location.search);
    launch = Object.fromEntries(XAPI_PARAMS.map((k) => [k, params.get(k)]));
    for (const k of XAPI_PARAMS) params.delete(k);
    const rest = params.toString();
    try { history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash); } catch (e) { /* sandboxed */ }
  }

  const explainer = window.attentionExplainer;
  if (!explainer || !L) return;
  explainer.ready.then(start, () => { /* the page says why it cannot start */ });

  function start() {
    if (kind === "scorm12" || kind === "scorm2004") startScorm().catch((e) => { notice("adapter", `Reporting to the course site stopped (${e.message}); your work is kept in this browser.`); });
    else if (kind === "xapi") startXapi();
  }

  const follow = (onChange) => L.follow(explainer, window, onChange);
  function suspendText(s) {
    return L.encodeSuspend({ place: L.placeOf(s), ticks: s.checklist, checks: s.checks }, SUSPEND_LIMIT);
  }
  function readSuspend(text) {
    const saved = L.decodeSuspend(text);
    if (saved.problem === "newer") notice("suspend", "Your saved progress was written by a newer version of this explainer: it is kept as it is, and this session starts afresh.");
    else if (saved.problem === "unreadable") notice("suspend", "Part of your saved progress could not be read; the rest was restored.");
    else if (saved.problem === "cut") notice("suspend", `Your saved progress was cut short; ${saved.read} answers were restored.`);
    if (saved.ok) for (const why of L.restore(explainer, saved)) notice("resume", `Some saved answers could not be restored (${why}).`);
    return saved;
  }

  // [SCORM] The API object: up the frame parents (at most 500, as ADL's wrapper does), then the opener's.
  function findApi(name) {
    const look = (win) => {
      for (let i = 0; win && i < 500; i++) {
        try { if (win[name]) return win[name]; } catch (e) { return null; }  // a cross-origin parent
        if (win.parent === win) break;
        win = win.parent;
      }
      return null;
    };
    let api = window.parent !== window ? look(window.parent) : null;
    if (!api) api = look(window);
    if (!api) { try { if (window.opener) api = look(window.opener); } catch (e) { api = null; } }
    return api;
  }
  // A sandboxed or cross-origin frame: scorm-again's cross-frame bridge, if the LMS page runs it
  // (its CrossFrameLMS answers our first call within a second and a half).
  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const s = Object.assign(document.createElement("script"), { src });
      s.onload = resolve;
      s.onerror = () => reject(new Error(src + " could not be loaded"));
      document.head.appendChild(s);
    });
  }
  async function bridgeApi(v12) {
    if (window.parent === window) return null;
    try { await loadScript("lms-bridge.js"); } catch (e) { return null; }
    if (typeof window.CrossFrameAPI !== "function") return null;
    let origin = "*";
    try { if (location.ancestorOrigins && location.ancestorOrigins.length) origin = location.ancestorOrigins[0]; } catch (e) { /* */ }
    if (origin === "*" && document.referrer) { try { origin = new URL(document.referrer).origin; } catch (e) { /* */ } }
    const api = new window.CrossFrameAPI(origin, window.parent);
    const ping = typeof api._post === "function" ? api._post(v12 ? "LMSGetLastError" : "GetLastError", []) : Promise.reject(new Error("no bridge"));
    const answered = await Promise.race([ping.then(() => true, () => false), new Promise((r) => setTimeout(() => r(false), 1500))]);
    if (!answered) { try { api.destroy(); } catch (e) { /* */ } return null; }
    // handed back in a box: the bridge answers every property, "then" too, so it must not be awaited itself
    return { api };
  }

  async function startScorm() {
    const v12 = kind === "scorm12";
    let api = findApi(v12 ? "API" : "API_1484_11"), bridged = false;
    if (!api) {
      const box = await bridgeApi(v12);
      api = box && box.api;
      bridged = !!api;
    }
    if (!api) {
      status.mode = "none";
      notice("no-api", "This page found no course site to report to: your answers are kept in this browser only.");
      return;
    }
    const names = v12 ? { init: "LMSInitialize", get: "LMSGetValue", set: "LMSSetValue", commit: "LMSCommit", finish: "LMSFinish", error: "LMSGetLastError" }
      : { init: "Initialize", get: "GetValue", set: "SetValue", commit: "Commit", finish: "Terminate", error: "GetLastError" };
    let broken = false;
    const failed = (what, e) => {
      if (!broken) notice("api", `The course site did not accept ${what}${e ? " (" + e.message + ")" : ""}: your answers are kept in this browser, and the page keeps trying.`);
      broken = true;
    };
    const callApi = (method, ...args) => {
      try {
        const r = api[names[method]](...args);
        if (method !== "get" && String(r) !== "true") {
          let code = "";
          try { code = String(api[names.error]()); } catch (e) { /* */ }
          failed(`${names[method]}(${args[0] || ""})${code && code !== "0" ? " (error " + code + ")" : ""}`);
          return null;
        }
        return r;
      } catch (e) { failed(names[method], e); return null; }
    };
    const get = (k) => { const v = callApi("get", k); return v === null || v === undefined ? "" : String(v); };
    const set = (k, v) => callApi("set", k, String(v)) !== null;

    if (callApi("init", "") === null) { status.mode = "failed"; return; }
    status.mode = bridged ? "bridge" : "api";
    if (bridged && typeof api._post === "function") {  // the bridge's values arrive asynchronously
      try {
        const all = await api._post("getFlattenedCMI", []);
        if (all && typeof all === "object") for (const [k, v] of Object.entries(all)) if (api._cache && !api._cache.has(k)) api._cache.set(k, String(v));
      } catch (e) { /* */ }
    }
    const started = performance.now();
    const mastery = v12 ? Number(get("cmi.student_data.mastery_score")) : NaN;
    const passing = v12 ? (get("cmi.student_data.mastery_score") !== "" && Number.isFinite(mastery) ? mastery / 100 : null)
      : (get("cmi.scaled_passing_score") !== "" && Number.isFinite(Number(get("cmi.scaled_passing_score"))) ? Number(get("cmi.scaled_passing_score")) : null);
    const entry = get(v12 ? "cmi.core.entry" : "cmi.entry");
    const saved = readSuspend(get("cmi.suspend_data"));
    // A first attempt starts afresh: not with answers an earlier learner left in this browser.
    if (!saved.ok && saved.problem === "empty" && entry === "ab-initio") explainer.setState({ checks: {}, checklist: 0 });
    let keepSaved = saved.problem === "newer";  // a newer version's record stays until this learner answers
    // 2004's interactions can be read and updated: one per check, found by id
    const known = new Map();
    let count = Number(get(v12 ? "cmi.interactions._count" : "cmi.interactions._count")) || 0;
    if (!v12) for (let n = 0; n < count; n++) known.set(get(`cmi.interactions.${n}.id`), n);
    if (v12) { set("cmi.core.score.min", 0); set("cmi.core.score.max", 100); }
    else { set("cmi.score.min", 0); set("cmi.score.max", 100); }
    let lastStatus = "";

    function record(a) {
      const i = L.interaction(a, a.check);
      let n = count;
      if (!v12 && known.has(a.id)) n = known.get(a.id);
      const p = `cmi.interactions.${n}.`;
      const when = new Date();
      if (v12) {
        set(p + "id", a.id);
        set(p + "time", when.toTimeString().slice(0, 8));
        set(p + "type", i.type);
        set(p + "weighting", a.id.startsWith("derive.") ? 0.0222 : 1);
        set(p + "student_response", i.response.slice(0, 255));
        set(p + "result", a.right ? "correct" : "wrong");
        set(p + "latency", L.timespan12(a.ms));
      } else {
        if (!known.has(a.id)) set(p + "id", a.id);
        set(p + "type", i.type);
        set(p + "timestamp", when.toISOString().slice(0, 19));
        set(p + "description", i.description.slice(0, 250));
        set(p + "weighting", a.id.startsWith("derive.") ? 0.0222 : 1);
        const response = i.type === "choice" ? L.choiceId(i.response) : i.type === "fill-in" ? i.response.replace(/\[[,.:]\]/g, " ").slice(0, 250) : i.response;
        set(p + "learner_response", response);
        set(p + "result", a.right ? "correct" : "incorrect");
        set(p + "latency", L.isoDuration(a.ms));
      }
      if (n === count) { known.set(a.id, n); count += 1; }
    }
    function report(s) {
      const sc = L.score(s.progress);
      if (v12) {
        set("cmi.core.score.raw", sc.raw);
        let lesson = sc.complete ? "completed" : "incomplete";
        if (passing !== null && sc.scaled >= passing) lesson = "passed";
        else if (passing !== null && sc.complete) lesson = "failed";
        if (lesson !== lastStatus) set("cmi.core.lesson_status", lesson);
        lastStatus = lesson;
        set("cmi.core.lesson_location", String(s.view).slice(0, 255));
      } else {
        set("cmi.score.raw", sc.raw);
        set("cmi.score.scaled", sc.scaled);
        set("cmi.progress_measure", Math.round((sc.answered / sc.items) * 1000) / 1000);
        set("cmi.completion_status", sc.complete ? "completed" : "incomplete");
        const success = passing === null ? "unknown" : sc.scaled >= passing ? "passed" : sc.complete ? "failed" : "unknown";
        set("cmi.success_status", success);
        set("cmi.location", String(s.view).slice(0, 1000));
      }
      if (!keepSaved) set("cmi.suspend_data", suspendText(s));
      set(v12 ? "cmi.core.session_time" : "cmi.session_time", v12 ? L.timespan12(performance.now() - started) : L.isoDuration(performance.now() - started));
    }

    // The exit is "suspend" so the next launch resumes (entry "resume" with this suspend_data).
    set(v12 ? "cmi.core.exit" : "cmi.exit", "suspend");
    const first = explainer.getSummary();
    report(first);
    callApi("commit", "");
    let placeTimer = 0;
    const flush = follow((s, answers) => {
      if (answers.length) keepSaved = false;
      for (const a of answers) record(a);
      report(s);
      // an answer is committed at once; a change of place (a slider, a view) a moment later
      clearTimeout(placeTimer);
      if (answers.length) callApi("commit", "");
      else placeTimer = setTimeout(() => callApi("commit", ""), 1500);
    });
    let finished = false;
    window.addEventListener("pagehide", () => {
      if (finished) return;
      finished = true;
      clearTimeout(placeTimer);
      flush();
      report(explainer.getSummary());
      callApi("commit", "");
      callApi("finish", "");
      status.mode = "finished";
    });
    status.finish = () => window.dispatchEvent(new Event("pagehide"));
  }

  // [xAPI] Statements PUT to the LRS with ids made here, queued (and kept in the browser, without the
  // credentials) while it cannot be reached, sent one at a time, never waited for by the page.
  const QUEUE_KEY = "attention-explainer:xapi-queue";
  function validActor(a) {
    if (!a || typeof a !== "object" || Array.isArray(a)) return false;
    const ifis = ["mbox", "mbox_sha1sum", "openid", "account"].filter((k) => a[k] !== undefined);
    if (ifis.length !== 1) return false;
    if (a.mbox !== undefined && !/^mailto:[^\s@]+@[^\s@]+$/.test(String(a.mbox))) return false;
    if (a.mbox_sha1sum !== undefined && !/^[0-9a-f]{40}$/i.test(String(a.mbox_sha1sum))) return false;
    if (a.account !== undefined && !(a.account && typeof a.account.name === "string" && /^https?:\/\//.test(String(a.account.homePage)))) return false;
    if (a.name !== undefined && typeof a.name !== "string") return false;
    return true;
  }
  function cleanActor(a) {  // only what xAPI's Agent has (a hostile actor may carry anything else)
    const out = { objectType: "Agent" };
    if (typeof a.name === "string") out.name = a.name.slice(0, 200);
    for (const k of ["mbox", "mbox_sha1sum", "openid"]) if (a[k] !== undefined) out[k] = String(a[k]);
    if (a.account) out.account = { homePage: String(a.account.homePage), name: String(a.account.name) };
    return out;
  }
  function startXapi() {
    let endpoint = null, actor = null;
    try {
      const u = new URL(String(launch.endpoint || ""));
      if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error("not http(s)");
      if (u.username || u.password) throw new Error("credentials in the URL");
      endpoint = u.href.endsWith("/") ? u.href : u.href + "/";
    } catch (e) { endpoint = null; }
    try {
      const parsed = JSON.parse(launch.actor || "null");
      const a = Array.isArray(parsed && parsed.mbox) ? { ...parsed, mbox: parsed.mbox[0] } : parsed;  // old TinCan launchers send lists
      if (a && Array.isArray(a.account) && a.account[0]) a.account = { homePage: a.account[0].accountServiceHomePage, name: a.account[0].accountName };
      if (a && Array.isArray(a.name)) a.name = a.name[0];
      actor = validActor(a) ? cleanActor(a) : null;
    } catch (e) { actor = null; }
    const auth = typeof launch.auth === "string" && /^[\x21-\x7e][\x20-\x7e]{0,2000}$/.test(launch.auth) ? launch.auth : null;
    const registration = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(launch.registration || "") ? launch.registration.toLowerCase() : undefined;
    let activityId = location.origin + location.pathname;
    try {
      if (launch.activity_id) {
        const u = new URL(launch.activity_id);
        if (/^[a-z][a-z0-9+.-]*:$/.test(u.protocol) && !/[\s<>"]/.test(launch.activity_id)) activityId = u.href;
      }
    } catch (e) { /* the page's own address */ }
    if (!endpoint || !actor || !auth) {
      status.mode = "none";
      const missing = [!endpoint && "endpoint", !actor && "actor", !auth && "auth"].filter(Boolean).join(", ");
      notice("no-lrs", `This page was not given a usable learning record store (${missing} missing or not valid): your answers are kept in this browser only.`);
      return;
    }
    status.mode = "lrs";
    status.activityId = activityId;
    const make = L.statements({ actor, activityId, registration });
    let queue = [];
    try { queue = JSON.parse(localStorage.getItem(QUEUE_KEY) || "[]").filter((q) => q && q.endpoint === endpoint && q.statement && q.statement.id); } catch (e) { queue = []; }
    const keep = () => { try { localStorage.setItem(QUEUE_KEY, JSON.stringify(queue)); } catch (e) { /* storage blocked: memory only */ } };
    status.queued = () => queue.length;
    let sending = false, wait = 1000, retryTimer = 0;
    function enqueue(statement) { queue.push({ endpoint, statement }); keep(); send(); }
    async function send() {
      if (sending || !queue.length) return;
      sending = true;
      clearTimeout(retryTimer);
      const { statement } = queue[0];
      let outcome = "retry";
      try {
        const r = await fetch(endpoint + "statements?statementId=" + encodeURIComponent(statement.id), {
          method: "PUT", body: JSON.stringify(statement), credentials: "omit", referrerPolicy: "no-referrer",
          headers: { Authorization: auth, "X-Experience-API-Version": "1.0.3", "Content-Type": "application/json" } });
        if (r.ok || r.status === 409) outcome = "sent";  // 409: the LRS has this id already
        else if (r.status === 400) { outcome = "sent"; notice("lrs-400", "The learning record store refused a statement as invalid."); }
        else if (r.status === 401 || r.status === 403) notice("lrs-auth", "The learning record store refused this page's credentials; your answers wait here and are sent when it accepts them.");
        else notice("lrs-down", "The learning record store cannot be reached just now; your answers wait here and are sent once it can.");
      } catch (e) {
        notice("lrs-down", "The learning record store cannot be reached just now; your answers wait here and are sent once it can.");
      }
      sending = false;
      if (outcome === "sent") {
        queue.shift(); keep(); status.sent += 1; wait = 1000;
        if (queue.length) send();
      } else {
        retryTimer = setTimeout(send, wait);
        wait = Math.min(wait * 2, 30000);
      }
    }
    window.addEventListener("online", () => { wait = 1000; send(); });
    const started = performance.now();
    let finishedOnce = L.score(explainer.getSummary().progress).complete;
    enqueue(make.attempted());
    follow((s, answers) => {
      for (const a of answers) enqueue(make.answered(a, a.check, a.ms));
      const sc = L.score(s.progress);
      if (sc.complete && !finishedOnce) {
        finishedOnce = true;
        for (const st of make.finished(sc, PASS_MARK, performance.now() - started)) enqueue(st);
      }
    });
    send();
  }
})();
