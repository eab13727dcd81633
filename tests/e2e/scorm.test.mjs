// The SCORM 1.2 and 2004 packages with scorm-again (the LMS-side runtime LMSs embed) as the LMS: a host
// page frames the package's launch page (same origin, and once sandboxed on another origin through
// scorm-again's cross-frame bridge); checks answered by real clicks and typing are read back from the
// runtime's own data; a relaunch with the saved CMI resumes; the manifests pass the SCORM schemas; a
// missing, failing or lying LMS costs the learner nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { serveStatic, launchBrowser, frames, screenshot } from "./harness.mjs";
import { extractedPackage, explainerFrame, driver, allAnswered, until, NODE_MODULES } from "./lms_harness.mjs";
import { SCHEMA_DIRS } from "../../tools/package_lms.mjs";

let root, server, other, browser;
const packages = {};
before(async () => {
  packages.scorm12 = extractedPackage("scorm12");
  root = packages.scorm12.root;
  packages.scorm2004 = extractedPackage("scorm2004", root);
  fs.mkdirSync(path.join(root, "runtime"));
  for (const f of ["scorm12.js", "scorm2004.js", "cross-frame-lms.js"])
    fs.copyFileSync(path.join(NODE_MODULES, "scorm-again/dist", f), path.join(root, "runtime", f));
  server = await serveStatic(root);
  other = await serveStatic(root);  // the LMS on another origin (the sandboxed case)
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.close(); await other?.close(); });

// What the manifest asks of the LMS: 1.2's adlcp:masteryscore, 2004's primary objective's measure.
function manifestFacts(kind) {
  const text = fs.readFileSync(path.join(packages[kind].dir, "imsmanifest.xml"), "utf8");
  return kind === "scorm12" ? { mastery_score: /<adlcp:masteryscore>(\d+)</.exec(text)[1] }
    : { scaled_passing_score: /<imsss:minNormalizedMeasure>([\d.]+)</.exec(text)[1] };
}

/** The LMS page: scorm-again's API with the manifest's facts (and a saved attempt), the launch page framed. */
function hostPage(kind, { sandboxed = false, launchBase = "" } = {}) {
  const v12 = kind === "scorm12";
  const name = `host-${kind}${sandboxed ? "-sandboxed" : ""}.html`;
  fs.writeFileSync(path.join(root, name), `<!doctype html><link rel="icon" href="data:,"><body style="margin:0">
<script src="runtime/${v12 ? "scorm12" : "scorm2004"}.js"></script>
${sandboxed ? '<script src="runtime/cross-frame-lms.js"></script>' : ""}
<script>
  const api = new ${v12 ? "Scorm12API" : "Scorm2004API"}({ autocommit: false, logLevel: 5 });
  window.${v12 ? "API" : "API_1484_11"} = ${sandboxed ? "undefined" : "api"};
  window.lms = api;
  window.events = [];
  for (const e of ${v12 ? '["LMSInitialize", "LMSCommit", "LMSFinish"]' : '["Initialize", "Commit", "Terminate"]'}) api.on(e, () => events.push(e));
  api.loadFromJSON(window.SAVED || ${JSON.stringify(v12 ? { student_data: manifestFacts(kind), core: { entry: "ab-initio" } } : { ...manifestFacts(kind), entry: "ab-initio" })}, "");
  ${sandboxed ? 'new CrossFrameLMS(api, "*");' : ""}
  window.readCmi = () => JSON.parse(JSON.stringify(api.cmi));
</script>
<iframe id="sco" ${sandboxed ? 'sandbox="allow-scripts allow-same-origin"' : ""} src="${launchBase}${kind}/lms.html" style="width:1200px;height:860px;border:0"></iframe></body>`);
  return name;
}

async function openHost(url, { saved } = {}) {
  const context = await browser.newContext({ viewport: { width: 1220, height: 880 } });
  if (saved) await context.addInitScript((s) => { window.SAVED = s; }, saved);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  const frame = await explainerFrame(page);
  await frames(frame, 4);
  return { context, page, frame, errors, drive: driver(page, frame) };
}
const cmi = (page) => page.evaluate(() => window.readCmi());
const interactions = (c) => Object.values(c.interactions && c.interactions.childArray ? c.interactions.childArray : c.interactions || {})
  .filter((i) => i && typeof i === "object" && i.id);

/** Right and wrong answers by hand: the weights check wrong then right, one Derive cell right, one wrong. */
async function answerByHand({ frame, drive }) {
  await drive.openView("weights");
  const { right, wrong } = await drive.weightsChoices();
  await drive.click(`quiz:choice:${wrong}`);
  await drive.click(`quiz:choice:${right}`);
  await frame.evaluate(() => window.attentionExplainer.setState({ view: "derive", derive_revealed: 0 }));
  await frames(frame, 4);
  const w = await frame.evaluate(() => window.attentionExplainer.getState().view_data.weights);
  await drive.type("derive:cell:4:0:0", w[0][0].toFixed(2));
  await drive.type("derive:cell:4:0:1", (w[0][1] + 0.2).toFixed(2));
  return { rightCell: w[0][0].toFixed(2) };
}

for (const kind of ["scorm12", "scorm2004"]) {
  const v12 = kind === "scorm12";
  test(`${kind}: answers by hand reach scorm-again as interactions, score, statuses and time; a relaunch resumes`, async () => {
    const host = hostPage(kind);
    const s = await openHost(server.url + host);
    const { rightCell } = await answerByHand(s);
    // 1.2's interactions are a journal (one per answer); 2004's are one per check, updated
    const expected = v12 ? [["weights", "choice", "wrong"], ["weights", "choice", "correct"], ["derive.weights.0.0", "numeric", "correct"],
      ["derive.weights.0.1", "numeric", "wrong"]] : [["weights", "choice", "correct"], ["derive.weights.0.0", "numeric", "correct"],
      ["derive.weights.0.1", "numeric", "incorrect"]];
    await until(async () => interactions(await cmi(s.page)).length >= expected.length, "the interactions in the runtime");
    let data = await cmi(s.page);
    const got = interactions(data);
    assert.deepEqual(got.map((i) => [i.id, i.type, i.result]), expected);
    const cell = got.find((i) => i.id === "derive.weights.0.0");
    assert.equal(v12 ? cell.student_response : cell.learner_response, String(Number(rightCell)));
    for (const i of got) assert.match(i.latency, v12 ? /^\d{2,4}:\d\d:\d\d(\.\d\d?)?$/ : /^PT[\dHMS.]+$/, `latency ${i.latency}`);
    // one view right (1 item) + one Derive cell of 45, out of 10 items: 10.22 of 100
    const score = v12 ? data.core.score : data.score;
    assert.equal(Number(score.raw), 10.22);
    assert.equal(Number(score.max), 100);
    if (v12) assert.equal(data.core.lesson_status, "incomplete");
    else {
      assert.equal(Number(score.scaled), 0.1022);
      assert.equal(data.completion_status, "incomplete");
      assert.equal(data.success_status, "unknown");
    }
    assert.match(v12 ? data.core.lesson_location : data.location, /derive/);
    const events = await s.page.evaluate(() => window.events);
    assert.ok(events.filter((e) => /Commit/.test(e)).length >= 4, `a commit per answer: ${events}`);
    // leaving the page terminates
    await s.frame.evaluate(() => { location.href = "about:blank"; });
    await until(() => s.page.evaluate(() => window.events.includes("LMSFinish") || window.events.includes("Terminate")), "the finish call");
    data = await cmi(s.page);
    const time = v12 ? data.core.session_time : data.session_time;
    assert.match(String(time), v12 ? /^\d{2,4}:\d\d:\d\d(\.\d{1,2})?$/ : /^PT/, `session time ${time}`);
    assert.notEqual(String(time), v12 ? "00:00:00" : "PT0S");
    assert.equal(v12 ? data.core.exit : data.exit, "suspend");
    const suspend = data.suspend_data;
    assert.ok(suspend.length > 0 && suspend.length <= (v12 ? 4096 : 64000));
    assert.deepEqual(s.errors, []);
    await s.context.close();

    // the second attempt: the saved CMI handed back, in a fresh browser profile
    const saved = v12 ? { student_data: manifestFacts(kind), suspend_data: suspend, core: { entry: "resume", lesson_status: data.core.lesson_status } }
      : { ...manifestFacts(kind), entry: "resume", suspend_data: suspend };
    const again = await openHost(server.url + host, { saved });
    const state = await again.frame.evaluate(() => window.attentionExplainer.getState());
    assert.equal(state.view, "derive", "back where the learner stopped");
    assert.equal(state.checks.weights.right, true);
    assert.equal(state.checks["derive.weights.0.0"].answer, rightCell);
    assert.equal(state.checks["derive.weights.0.1"].right, false);
    // the statuses, once everything is answered: 9 views right, Derive's cells all wrong: 90 of 100
    await again.frame.evaluate((checks) => window.attentionExplainer.setState({ checks }), allAnswered({ viewsRight: true }));
    await until(async () => { const c = await cmi(again.page); return (v12 ? c.core.lesson_status : c.completion_status) !== "incomplete"; }, "a final status");
    data = await cmi(again.page);
    if (v12) { assert.equal(data.core.lesson_status, "passed"); assert.equal(Number(data.core.score.raw), 90); }
    else { assert.equal(data.completion_status, "completed"); assert.equal(data.success_status, "passed"); assert.equal(Number(data.score.scaled), 0.9); }
    await again.frame.evaluate((checks) => window.attentionExplainer.setState({ checks }), allAnswered({ viewsRight: false }));
    await until(async () => { const c = await cmi(again.page); return (v12 ? c.core.lesson_status : c.success_status) === "failed"; }, "failed below the mastery score");
    assert.deepEqual(again.errors, []);
    await again.context.close();
  });
}

test("scorm12 in a sandboxed frame on another origin, through scorm-again's cross-frame bridge", async () => {
  const host = hostPage("scorm12", { sandboxed: true, launchBase: server.url });
  const s = await openHost(other.url + host);
  const mode = await until(async () => { const m = await s.frame.evaluate(() => window.attentionLms.mode); return m !== "searching" && m; }, "the API search").catch(async (e) => { throw new Error(e.message + ": " + JSON.stringify(await s.frame.evaluate(() => [window.attentionLms, document.getElementById("lms-notice")?.textContent]))); });
  assert.equal(mode, "bridge");
  await s.drive.openView("weights");
  const { wrong, right } = await s.drive.weightsChoices();
  await s.drive.click(`quiz:choice:${wrong}`);
  await s.drive.click(`quiz:choice:${right}`);
  await until(async () => interactions(await cmi(s.page)).length >= 2, "two interactions through the bridge");
  const data = await cmi(s.page);
  assert.deepEqual(interactions(data).map((i) => [i.id, i.result]), [["weights", "wrong"], ["weights", "correct"]]);
  assert.equal(Number(data.core.score.raw), 10);
  assert.ok(data.suspend_data.startsWith('["AE",1]'));
  assert.equal(await s.frame.evaluate(() => document.getElementById("lms-notice")), null, "no notice: the LMS was found");
  await s.context.close();
});

test("the manifests are valid against the SCORM 1.2 and 2004 4th edition schemas (xmllint)", () => {
  const namespaces = {
    scorm12: [["http://www.imsproject.org/xsd/imscp_rootv1p1p2", "imscp_rootv1p1p2.xsd"], ["http://www.adlnet.org/xsd/adlcp_rootv1p2", "adlcp_rootv1p2.xsd"]],
    scorm2004: [["http://www.imsglobal.org/xsd/imscp_v1p1", "imscp_v1p1.xsd"], ["http://www.adlnet.org/xsd/adlcp_v1p3", "adlcp_v1p3.xsd"],
      ["http://www.adlnet.org/xsd/adlseq_v1p3", "adlseq_v1p3.xsd"], ["http://www.adlnet.org/xsd/adlnav_v1p3", "adlnav_v1p3.xsd"],
      ["http://www.imsglobal.org/xsd/imsss", "imsss_v1p0.xsd"]],
  };
  for (const kind of ["scorm12", "scorm2004"]) {
    const dir = SCHEMA_DIRS[kind];
    // one schema that imports every namespace the manifest uses (its "any" elements are validated strictly)
    const all = path.join(root, `all-${kind}.xsd`);
    fs.writeFileSync(all, `<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">${namespaces[kind]
      .map(([ns, file]) => `<xs:import namespace="${ns}" schemaLocation="${path.join(dir, file)}"/>`).join("")}</xs:schema>`);
    const manifest = path.join(packages[kind].dir, "imsmanifest.xml");
    execFileSync("xmllint", ["--noout", "--nonet", "--schema", all, manifest], { stdio: "pipe" });
    // and a broken one is refused (the check can fail)
    const broken = path.join(root, `broken-${kind}.xml`);
    fs.writeFileSync(broken, fs.readFileSync(manifest, "utf8").replace(/<organizations /, "<organisations ").replace(/<\/organizations>/, "</organisations>"));
    assert.throws(() => execFileSync("xmllint", ["--noout", "--nonet", "--schema", all, broken], { stdio: "pipe" }), `${kind}: a misspelt element`);
    // every file the package holds is listed (and the launch page is the SCO)
    const text = fs.readFileSync(manifest, "utf8");
    for (const name of packages[kind].names.filter((n) => !/\.(xsd|dtd)$/.test(n) && n !== "imsmanifest.xml"))
      assert.ok(text.includes(`<file href="${name}"/>`), `${kind}: ${name} in the manifest`);
    assert.match(text, /href="lms.html"/);
  }
});

/** The launch page alone, or under a host whose API is given as a script. */
async function openLaunch(apiScript, { kind = "scorm12", saved } = {}) {
  const name = `bad-${Math.random().toString(36).slice(2)}.html`;
  fs.writeFileSync(path.join(root, name), `<!doctype html><link rel="icon" href="data:,"><body style="margin:0"><script>${apiScript}</script>
<iframe src="${kind}/lms.html" style="width:1200px;height:860px;border:0"></iframe></body>`);
  const context = await browser.newContext({ viewport: { width: 1220, height: 880 } });
  if (saved !== undefined) await context.addInitScript((t) => { window.SAVED_TEXT = t; }, saved);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url + name);
  const frame = await explainerFrame(page);
  await until(() => frame.evaluate(() => window.attentionLms.mode !== "searching"), "the API search");
  await frames(frame, 4);
  return { context, page, frame, errors };
}
const noticeText = (frame) => frame.evaluate(() => { const n = document.getElementById("lms-notice"); return n ? n.textContent : null; });
const FAKE12 = (body) => `window.calls = []; window.API = { ${["LMSInitialize", "LMSFinish", "LMSGetValue", "LMSSetValue", "LMSCommit"].map((m) =>
  `${m}: (...a) => { calls.push(["${m}", ...a]); ${body} }`).join(", ")}, LMSGetLastError: () => "101", LMSGetErrorString: () => "General exception", LMSGetDiagnostic: () => "" };`;

test("no LMS, or one that fails every call: said once on screen, and the learner's answers stay in the browser", async () => {
  for (const [label, script] of [["no API", ""], ["every call false", FAKE12('return "false";')],
    ["every call throws", FAKE12('throw new Error("LMS down");')], ["Initialize fine, the rest false", FAKE12('return a.length === 1 && calls.length === 1 ? "true" : "false";')]]) {
    const s = await openLaunch(script);
    const first = await noticeText(s.frame);
    assert.ok(first && first.length > 20, `${label}: a notice (${first})`);
    assert.equal(await s.frame.evaluate(() => document.getElementById("lms-notice").getAttribute("role")), "status", "read out by screen readers");
    if (label === "no API") await screenshot(s.frame.page(), "lms-no-api");
    // the learner keeps working: answers (several changes) are kept under the package's key
    for (const [i, answer] of ["0.40", "0.10", "0.40"].entries()) {
      await s.frame.evaluate(({ answer, i }) => window.attentionExplainer.setState({ view: i % 2 ? "derive" : "weights",
        checks: { "derive.weights.0.0": { answer, question: "", right: answer === "0.40", passed: false } } }), { answer, i });
      await frames(s.frame, 4);
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await noticeText(s.frame), first, `${label}: said once, not per call`);
    const kept = await s.frame.evaluate(() => JSON.parse(localStorage.getItem("attention-explainer:scorm12")));
    assert.equal(kept.checks["derive.weights.0.0"].answer, "0.40", `${label}: the answer is kept in the browser`);
    assert.deepEqual(s.errors, [], label);
    await s.context.close();
  }
});

test("suspend_data from a newer version, cut short, or in the page's own older format: read what can be, say so, lose nothing", async () => {
  const lines = ['["AE",1]', '["place",{"view":"cost"}]', '["ticks",3]', '["a","weights","it",1,1]', '["a","derive.weights.0.0","0.40",1]', '["a","cost","64",1,1]'];
  const cases = [
    ["cut mid-record", (lines.join("\n") + "\n").slice(0, -8), (st) => {
      assert.equal(st.checks.weights.answer, "it"); assert.equal(st.checks["derive.weights.0.0"].answer, "0.40");
      assert.equal(st.checks.cost, undefined); assert.equal(st.checklist, 3); assert.equal(st.view, "cost"); }, /cut short; 2 answers/],
    ["newer", '["AE",7]\n["future","x"]\n', (st) => assert.deepEqual(st.checks, {}), /newer version/],
    ["older (the page's progress JSON)", JSON.stringify({ version: 2, checklist: 5, checks: { cost: { answer: "64", question: "", right: true, passed: true } } }),
      (st) => { assert.equal(st.checks.cost.answer, "64"); assert.equal(st.checklist, 5); }, null],
    ["garbage", "%%%not ours%%%", (st) => assert.deepEqual(st.checks, {}), /could not be read/],
  ];
  for (const [label, text, check, said] of cases) {
    const script = `window.store = { "cmi.suspend_data": window.SAVED_TEXT, "cmi.core.entry": "resume" }; window.API = {
      LMSInitialize: () => "true", LMSFinish: () => "true", LMSCommit: () => "true", LMSGetLastError: () => "0",
      LMSGetErrorString: () => "", LMSGetDiagnostic: () => "",
      LMSGetValue: (k) => (k in store ? store[k] : ""), LMSSetValue: (k, v) => { store[k] = v; return "true"; } };`;
    const s = await openLaunch(script, { saved: text });
    const state = await s.frame.evaluate(() => window.attentionExplainer.getState());
    check(state);
    const n = await noticeText(s.frame);
    if (said) assert.match(String(n), said, label); else assert.equal(n, null, label);
    const stored = await s.page.evaluate(() => window.store["cmi.suspend_data"]);
    if (label === "newer") {
      assert.equal(stored, text, "a newer version's record is left as it was until the learner answers");
      await s.frame.evaluate(() => window.attentionExplainer.setState({ checks: { cost: { answer: "9", question: "", right: false, passed: false } } }));
      await until(() => s.page.evaluate(() => window.store["cmi.suspend_data"].startsWith('["AE",1]')), "this session's record after an answer");
    }
    assert.deepEqual(s.errors, [], label);
    await s.context.close();
  }
});
