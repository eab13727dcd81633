// What a course site is told, in no standard's words yet: the items scored (each view's check, Derive's
// cells), the new answers since the last look, the learner's place as compact text, and xAPI statements.
// Shared by the packages' launch page (web/lms.js) and the H5P content type; never loaded by the plain site.
(function (root) {
  "use strict";

  // Each view's check question is one item; Derive is one item scored by its 45 cells right
  // (scores 9, scaled 9, exps 9, sums 3, weights 9, outputs 6).
  const VIEW_CHECKS = ["flow", "weights", "library", "steps", "break", "mistakes", "build", "cost", "compare"];
  const ITEMS = [...VIEW_CHECKS, "derive"];
  const DERIVE_STAGES = ["scores", "scaled", "exp", "sums", "weights", "output"];
  const DERIVE_CELLS = 45;

  /** The score over the items that count (default: all): {raw 0..100, min 0, max 100, scaled 0..1,
   *  points, items, answered, complete}. `progress` is getSummary().progress. */
  function score(progress, counted = ITEMS) {
    const items = counted.filter((id) => ITEMS.includes(id));
    let points = 0, answered = 0;
    for (const id of items) {
      const marks = progress && progress[id];
      if (!marks) continue;
      const total = id === "derive" ? DERIVE_CELLS : 1;
      points += Math.min(1, Math.max(0, Number(marks.correct) || 0) / total);
      // Derive counts as answered once all its cells are typed
      if ((Number(marks.answered) || 0) >= total) answered += 1;
    }
    const scaled = items.length ? points / items.length : 0;
    // in whole numbers too (H5P and xAPI): each item is worth 45, a Derive cell 1
    const whole = items.reduce((sum, id) => sum + (id === "derive" ? Math.min(DERIVE_CELLS, Number(progress && progress.derive && progress.derive.correct) || 0)
      : progress && progress[id] && progress[id].correct ? DERIVE_CELLS : 0), 0);
    return { raw: Math.round(scaled * 10000) / 100, min: 0, max: 100, scaled: Math.round(scaled * 10000) / 10000,
      points: whole, maxPoints: DERIVE_CELLS * items.length, items: items.length, answered,
      complete: items.length > 0 && answered === items.length };
  }

  // [Following the page] After each change: the new answers, each with its latency (from when its view,
  // or Derive, was opened, or from the previous answer there) and, for a view's check, its question.
  // `target` is the window whose "attention-explainer-change" events to hear. Returns a flush().
  function follow(explainer, target, onChange) {
    let before = explainer.getSummary();
    let since = { view: before.view, at: performance.now() };
    let timer = 0;
    const look = () => {
      const now = explainer.getSummary();
      if (now.view !== since.view) since = { view: now.view, at: performance.now() };
      let viewData;  // the open view's data, read once per look when an answer needs it
      const data = () => { if (viewData === undefined) { try { viewData = explainer.getState().view_data; } catch (e) { viewData = null; } } return viewData; };
      const answers = newAnswers(before.checks, now.checks).map((a) => {
        const at = performance.now(), ms = at - since.at;
        since = { view: now.view, at };
        let check = null;  // a view's answer is given while its view is open
        if (!a.id.startsWith("derive.") && now.view === a.id) check = data() && data().check;
        // Derive marks its cells live (against the numbers it shows): the mark as Derive shows it now
        const cell = /^derive\.([a-z]+)\.(\d+)\.(\d+)$/.exec(a.id);
        if (cell && now.view === "derive" && data() && Array.isArray(data().predictions)) {
          const stage = data().predictions.find((p) => p.stage === cell[1]);
          const mark = stage && stage.cells[Number(cell[2])] && stage.cells[Number(cell[2])][Number(cell[3])];
          if (mark && mark.typed === a.answer) a = { ...a, right: !!mark.right };
        }
        return { ...a, ms, check };
      });
      const placeChanged = ["view", "sentence", "model", "token", "checklist"].some((k) => JSON.stringify(now[k]) !== JSON.stringify(before[k]));
      before = now;
      if (answers.length || placeChanged) onChange(now, answers, placeChanged);
    };
    target.addEventListener("attention-explainer-change", () => { clearTimeout(timer); timer = setTimeout(look, 30); });
    return () => { clearTimeout(timer); look(); };
  }

  const placeOf = (s) => ({ view: s.view, sentence: s.sentence, model: s.model, token: s.token });
  /** Saved answers and place (decodeSuspend's) back into the app, each part on its own: returns what was refused. */
  function restore(explainer, saved) {
    const refused = [];
    try { explainer.setState({ checks: saved.checks, checklist: saved.ticks }); } catch (e) {
      refused.push(e.message);
      try { explainer.setState({ checklist: saved.ticks }); } catch (ignored) { /* */ }
    }
    for (const key of ["model", "sentence", "view", "token"]) {
      if (saved.place[key] === undefined) continue;
      try { explainer.setState({ [key]: saved.place[key] }); } catch (e) { /* a model not loaded here, ... */ }
    }
    return refused;
  }

  /** Which check a check id belongs to: a view's name, or "derive" for a cell ("derive.weights.1.2"). */
  const itemOf = (id) => (id.startsWith("derive.") ? "derive" : id);

  /** The answers given since `before` (both are getSummary().checks): [{id, answer, right, question}],
   *  one per check whose answer or question changed (a click on the same choice again is no new answer). */
  function newAnswers(before, after) {
    const out = [];
    for (const [id, a] of Object.entries(after || {})) {
      const b = before && before[id];
      if (b && b.answer === a.answer && b.question === a.question && b.right === a.right) continue;
      out.push({ id, answer: a.answer, right: !!a.right, question: a.question || "" });
    }
    return out;
  }

  /** Derive's cell id in words: "Derive, weights, row 2, column 3". */
  function describe(id) {
    const m = /^derive\.([a-z]+)\.(\d+)\.(\d+)$/.exec(id);
    if (!m) return id;
    return `Derive, ${m[1]}, row ${Number(m[2]) + 1}, column ${Number(m[3]) + 1}`;
  }

  // [Suspend data] The learner's place and answers as lines of JSON, one record a line:
  //   ["AE",1]                                  the format and its version
  //   ["place",{"view":…,"sentence":…,"model":…,"token":…}]
  //   ["ticks",N]                               Practice's Prove-it ticks
  //   ["a","weights","it",1,1,"question…"]      a view's answer: id, answer, right, passed, question
  //   ["a","derive.weights.0.0","0.40",1]       a Derive cell: id, answer, right
  // Each line ends with "\n": a text cut short loses only its last, unfinished record.
  const FORMAT = "AE", VERSION = 1;

  function encodeSuspend({ place = {}, ticks = 0, checks = {} }, limit = 4096) {
    const head = [JSON.stringify([FORMAT, VERSION]), JSON.stringify(["place", place]), JSON.stringify(["ticks", ticks])];
    const answers = Object.entries(checks);
    const line = (id, a, withQuestion) => JSON.stringify(id.startsWith("derive.") ? ["a", id, a.answer, a.right ? 1 : 0]
      : ["a", id, a.answer, a.right ? 1 : 0, a.passed ? 1 : 0, ...(withQuestion && a.question ? [a.question] : [])]);
    const join = (lines) => lines.map((l) => l + "\n").join("");
    // Questions go first when the text is too long (the marks stay), then a long place text
    let text = join([...head, ...answers.map(([id, a]) => line(id, a, true))]);
    if (text.length > limit) text = join([...head, ...answers.map(([id, a]) => line(id, a, false))]);
    if (text.length > limit) {
      head[1] = JSON.stringify(["place", { view: place.view, model: place.model }]);
      text = join([...head, ...answers.map(([id, a]) => line(id, a, false))]);
    }
    while (text.length > limit) text = text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1);  // never more than the LMS takes
    return text;
  }

  /** Reads suspend data: {ok, place, ticks, checks, problem}. problem: null, "empty", "newer" (a later
   *  version's, not read), "unreadable", or "cut" (cut short: the whole records before the cut are read). */
  function decodeSuspend(text) {
    const out = { ok: false, place: {}, ticks: 0, checks: {}, problem: null, read: 0 };
    if (typeof text !== "string" || text === "") return { ...out, problem: "empty" };
    if (text[0] === "{") {  // the page's own stored progress ({"version": 2, "checklist", "checks"}), as an early build saved it
      try {
        const p = JSON.parse(text);
        if (p && (p.version === 1 || p.version === 2) && Number.isInteger(p.checklist))
          return { ...out, ok: true, ticks: p.checklist, checks: p.version === 2 && p.checks && typeof p.checks === "object" ? p.checks : {}, read: Object.keys(p.checks || {}).length };
        if (p && p.version > 2) return { ...out, problem: "newer" };
      } catch (e) { /* unreadable, below */ }
      return { ...out, problem: "unreadable" };
    }
    const lines = text.split("\n");
    const last = lines.pop();  // "" when the text ends as it should
    let cut = false;
    if (last !== "") {  // no end: whole if it still reads, else cut short there
      try { JSON.parse(last); lines.push(last); } catch (e) { cut = true; }
    }
    let first;
    try { first = JSON.parse(lines[0]); } catch (e) { first = null; }
    if (!Array.isArray(first) || first[0] !== FORMAT || !Number.isInteger(first[1]))
      return { ...out, problem: cut && lines.length === 0 && (text.startsWith('["AE"') || '["AE",'.startsWith(text)) ? "cut" : "unreadable" };
    if (first[1] > VERSION) return { ...out, problem: "newer" };
    for (const l of lines.slice(1)) {
      let r;
      try { r = JSON.parse(l); } catch (e) { out.problem = "unreadable"; continue; }
      if (!Array.isArray(r)) continue;
      if (r[0] === "place" && r[1] && typeof r[1] === "object") out.place = r[1];
      else if (r[0] === "ticks" && Number.isInteger(r[1]) && r[1] >= 0 && r[1] <= 0xffff) out.ticks = r[1];
      else if (r[0] === "a" && typeof r[1] === "string" && typeof r[2] === "string") {
        const a = { answer: r[2].slice(0, 40), question: "", right: r[3] === 1, passed: false };
        if (!r[1].startsWith("derive.")) {
          a.passed = r[4] === 1;
          if (typeof r[5] === "string") a.question = r[5].slice(0, 600);
        }
        out.checks[r[1]] = a;
        out.read += 1;
      }
    }
    if (cut) out.problem = "cut";
    out.ok = true;
    return out;
  }

  // [Time] SCORM 1.2's CMITimespan (HHHH:MM:SS.SS) and ISO 8601 durations (2004, xAPI).
  function timespan12(ms) {
    const cs = Math.max(0, Math.round(ms / 10));
    const h = Math.floor(cs / 360000), m = Math.floor((cs % 360000) / 6000), s = (cs % 6000) / 100;
    const two = (n) => String(n).padStart(2, "0");
    return `${String(Math.min(h, 9999)).padStart(4, "0")}:${two(m)}:${two(Math.floor(s))}.${two(Math.round((s % 1) * 100))}`;
  }
  function isoDuration(ms) {
    const cs = Math.max(0, Math.round(ms / 10));
    const h = Math.floor(cs / 360000), m = Math.floor((cs % 360000) / 6000), s = (cs % 6000) / 100;
    return `PT${h ? h + "H" : ""}${m ? m + "M" : ""}${Number(s.toFixed(2))}S`;
  }

  // [xAPI] Statements as xAPI 1.0.3 has them; the same ones for an LRS and for H5P's dispatcher.
  const VERBS = {
    attempted: "http://adlnet.gov/expapi/verbs/attempted",
    answered: "http://adlnet.gov/expapi/verbs/answered",
    completed: "http://adlnet.gov/expapi/verbs/completed",
    passed: "http://adlnet.gov/expapi/verbs/passed",
    failed: "http://adlnet.gov/expapi/verbs/failed",
  };
  const verb = (name) => ({ id: VERBS[name], display: { "en-US": name } });
  const ACTIVITY_TYPE = "http://adlnet.gov/expapi/activities/assessment";
  const INTERACTION_TYPE = "http://adlnet.gov/expapi/activities/cmi.interaction";
  function uuid() {
    if (root.crypto && root.crypto.randomUUID) return root.crypto.randomUUID();
    const b = new Uint8Array(16);
    root.crypto.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  /** An answer's interaction: {type: "choice" | "numeric" | "fill-in", response, description}. A typed
   *  number that reads as one becomes a plain decimal; anything else is fill-in text. */
  function interaction(answer, check) {
    const description = check && check.prompt ? check.prompt : describe(answer.id);
    if (check && check.kind === "choice") return { type: "choice", response: answer.answer, description, choices: check.choices || [] };
    const v = Number(String(answer.answer).trim().replace(",", "."));
    if (String(answer.answer).trim() !== "" && Number.isFinite(v) && Math.abs(v) < 1e10)
      return { type: "numeric", response: String(Number(v.toFixed(6))), description };
    return { type: "fill-in", response: String(answer.answer), description };
  }
  /** A choice's text as an xAPI / SCORM 2004 identifier (no spaces: percent-encoded). */
  const choiceId = (text) => encodeURIComponent(String(text)).replace(/[~!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()) || "empty";

  /** Builds statements for one learner and activity: {attempted(), answered(answer, check, ms), finished(score, passMark, ms)}. */
  function statements({ actor, activityId, name = "Self-attention explainer", registration, extraContext } = {}) {
    const base = (verbName, object, result) => {
      const s = { id: uuid(), actor, verb: verb(verbName), object, timestamp: new Date().toISOString() };
      if (result) s.result = result;
      const context = { ...(extraContext || {}) };
      if (registration) context.registration = registration;
      if (object.id !== activityId) context.contextActivities = { parent: [{ id: activityId, objectType: "Activity" }] };
      if (Object.keys(context).length) s.context = context;
      return s;
    };
    const main = { objectType: "Activity", id: activityId,
      definition: { name: { "en-US": name }, type: ACTIVITY_TYPE } };
    return {
      attempted: () => base("attempted", main),
      answered(answer, check, ms) {
        const i = interaction(answer, check);
        const definition = { name: { "en-US": i.description.slice(0, 250) }, type: INTERACTION_TYPE, interactionType: i.type };
        let response = i.response;
        if (i.type === "choice") {
          definition.choices = i.choices.map((c) => ({ id: choiceId(c), description: { "en-US": String(c) } }));
          response = choiceId(i.response);
        }
        const result = { success: !!answer.right, response, score: { raw: answer.right ? 1 : 0, min: 0, max: 1, scaled: answer.right ? 1 : 0 } };
        if (ms !== undefined) result.duration = isoDuration(ms);
        return base("answered", { objectType: "Activity", id: `${activityId}#check-${encodeURIComponent(answer.id)}`, definition }, result);
      },
      /** completed, then passed or failed when a pass mark (0..1) is set. */
      finished(s, passMark, ms) {
        // whole points, as H5P reports them: 45 an item, 1 a Derive cell
        const result = (extra) => ({ score: { raw: s.points, min: 0, max: s.maxPoints, scaled: s.scaled }, completion: true,
          ...(ms !== undefined ? { duration: isoDuration(ms) } : {}), ...extra });
        const list = [base("completed", main, result({}))];
        if (passMark !== null && passMark !== undefined) {
          const ok = s.scaled >= passMark;
          list.push(base(ok ? "passed" : "failed", main, result({ success: ok })));
        }
        return list;
      },
    };
  }

  root.AttentionLms = { VIEW_CHECKS, ITEMS, DERIVE_STAGES, DERIVE_CELLS, score, itemOf, newAnswers, describe, follow, placeOf, restore,
    encodeSuspend, decodeSuspend, timespan12, isoDuration, interaction, choiceId, statements, uuid, VERBS };
})(typeof window !== "undefined" ? window : globalThis);
