// The xAPI package launched the TinCan way (endpoint, auth and actor in the launch URL) against a local
// LRS that records what it is sent: the statements are valid xAPI 1.0.3 with the page's ids, go out
// while the page works, wait while offline or while the LRS fails, arrive once each; the credentials
// are in no address, permalink, log or Referer; hostile launch parameters cost nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createRequire } from "node:module";
import { serveStatic, launchBrowser, frames } from "./harness.mjs";
import { extractedPackage, explainerFrame, driver, allAnswered, until } from "./lms_harness.mjs";

const require = createRequire(import.meta.url);
const validateStatement = require("xapi-validation").default;
const AUTH = "Basic bGVhcm5lcjpzM2NyZXQtdG9rZW4tNzcx";  // learner:s3cret-token-771
const SECRET = "bGVhcm5lcjpzM2NyZXQtdG9rZW4tNzcx";
const ACTOR = { name: "Ada Lovelace", mbox: "mailto:ada@example.org" };
const REGISTRATION = "8f0b1c2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d";
const ACTIVITY = "https://course.example/activities/attention";

let pkg, server, browser, lrs;
/** The LRS: PUT /xapi/statements?statementId=… stored once per id; failNext answers 503 instead. */
function startLrs() {
  const store = new Map(), requests = [];
  const state = { store, requests, failNext: 0 };
  const srv = http.createServer((req, res) => {
    const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "PUT, POST, GET, OPTIONS",
      "Access-Control-Allow-Headers": "Authorization, Content-Type, X-Experience-API-Version" };
    if (req.method === "OPTIONS") { res.writeHead(204, cors).end(); return; }
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      requests.push({ method: req.method, path: url.pathname, id: url.searchParams.get("statementId"), headers: req.headers });
      if (state.failNext > 0) { state.failNext--; res.writeHead(503, cors).end(); return; }
      if (req.method !== "PUT" || url.pathname !== "/xapi/statements") { res.writeHead(400, cors).end(); return; }
      const id = url.searchParams.get("statementId");
      if (store.has(id)) { res.writeHead(409, cors).end(); return; }
      store.set(id, { statement: JSON.parse(body), auth: req.headers.authorization, version: req.headers["x-experience-api-version"] });
      res.writeHead(204, cors).end();
    });
  });
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve({ ...state, state, url: `http://127.0.0.1:${srv.address().port}/xapi/`, close: () => new Promise((r) => srv.close(r)) })));
}
before(async () => {
  pkg = extractedPackage("xapi");
  server = await serveStatic(pkg.root);
  lrs = await startLrs();
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.close(); await lrs?.close(); });

const launchUrl = (params) => server.url + "xapi/lms.html?" + new URLSearchParams(params).toString();
async function launch(params) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [], logs = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => logs.push(m.text()));
  await page.goto(launchUrl(params));
  const frame = await explainerFrame(page);
  await frames(frame, 4);
  return { context, page, frame, errors, logs, drive: driver(page, frame) };
}
const stored = () => [...lrs.store.values()].map((v) => v.statement);
const verbOf = (s) => s.verb.id.split("/").pop();

test("statements reach the LRS once each, through offline and a failing LRS; valid xAPI; the credentials stay hidden", async () => {
  const s = await launch({ endpoint: lrs.url, auth: AUTH, actor: JSON.stringify(ACTOR), registration: REGISTRATION, activity_id: ACTIVITY, view: "weights" });
  assert.equal(await s.frame.evaluate(() => window.attentionLms.mode), "lrs");
  // the address bar lost the launch parameters at once; the view parameter still worked
  assert.doesNotMatch(await s.frame.evaluate(() => location.href), /auth|endpoint|actor|bGVh/);
  assert.equal(await s.frame.evaluate(() => window.attentionExplainer.getState().view), "weights");
  await until(() => stored().length >= 1, "attempted at the LRS");
  const { wrong, right } = await s.drive.weightsChoices();
  await s.drive.click(`quiz:choice:${wrong}`);
  await s.drive.click(`quiz:choice:${right}`);
  await until(() => stored().length >= 3, "two answers at the LRS");

  // offline: the answers wait in the page (which keeps working), then go when it is back
  await s.context.setOffline(true);
  await s.frame.evaluate(() => window.attentionExplainer.setState({ view: "derive", derive_revealed: 0 }));
  await frames(s.frame, 4);
  const w = await s.frame.evaluate(() => window.attentionExplainer.getState().view_data.weights);
  await s.drive.type("derive:cell:4:0:0", w[0][0].toFixed(2));
  await s.drive.type("derive:cell:4:0:1", "9");
  await until(() => s.frame.evaluate(() => window.attentionLms.queued() >= 2), "two statements queued");
  assert.equal(stored().length, 3, "nothing arrived while offline");
  assert.match(await s.frame.evaluate(() => document.getElementById("lms-notice").textContent), /cannot be reached/);
  await s.context.setOffline(false);
  await until(() => stored().length >= 5, "the queued statements after going online", 40000);
  // a failing LRS (503 twice): retried until stored, once
  lrs.state.failNext = 2;
  await s.frame.evaluate((checks) => window.attentionExplainer.setState({ checks }), allAnswered({ viewsRight: true }));
  await until(() => stored().some((st) => verbOf(st) === "passed"), "completed and passed", 60000);
  await until(() => s.frame.evaluate(() => window.attentionLms.queued() === 0), "an empty queue", 20000);

  const all = stored();
  const puts = lrs.requests.filter((r) => r.method === "PUT");
  const ids = all.map((st) => st.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.ok(puts.filter((r) => r.id === id).length <= 3, `${id} was not sent over and over`);
  assert.equal(puts.filter((r) => lrs.store.has(r.id)).length, ids.length + 2, "each stored once; the two 503s retried");
  assert.deepEqual(all.slice(0, 5).map(verbOf), ["attempted", "answered", "answered", "answered", "answered"]);
  assert.deepEqual(all.slice(1, 5).map((st) => st.result.success), [false, true, true, false]);
  const passed = all.find((st) => verbOf(st) === "passed"), completed = all.find((st) => verbOf(st) === "completed");
  assert.deepEqual(completed.result.score, { raw: 405, min: 0, max: 450, scaled: 0.9 });
  assert.equal(passed.result.success, true);
  for (const st of all) {
    assert.deepEqual(validateStatement(st), [], `${verbOf(st)} ${st.object.id}`);
    assert.deepEqual(st.actor, { objectType: "Agent", ...ACTOR });
    assert.equal(st.context.registration, REGISTRATION);
    assert.ok(st.object.id === ACTIVITY || st.object.id.startsWith(ACTIVITY + "#check-"), st.object.id);
  }
  for (const { auth, version } of lrs.store.values()) { assert.equal(auth, AUTH); assert.equal(version, "1.0.3"); }
  // the credentials: in no Referer, permalink, copied link or log
  for (const r of lrs.requests) assert.doesNotMatch(String(r.headers.referer || ""), /bGVh|auth=/);
  assert.doesNotMatch(await s.frame.evaluate(() => window.attentionExplainer.permalink()), /bGVh|auth|endpoint|actor/);
  const copied = await s.frame.evaluate(() => { let text = null; window.Module.copyText = (t) => { text = t; }; window.Module.copyPermalink(); return text; });
  assert.doesNotMatch(copied, /bGVh|auth|endpoint/);
  assert.ok(!s.logs.some((l) => l.includes(SECRET)), "no log line holds the credentials");
  assert.deepEqual(s.errors, []);
  await s.context.close();
});

test("hostile or missing launch parameters: said once, nothing sent, the page works", async () => {
  const cases = [
    ["no LRS at all", {}],
    ["a javascript: endpoint, a broken actor", { endpoint: "javascript:alert(1)//", auth: AUTH, actor: "{\"mbox\": \"mailto:x@y\"" }],
    ["an actor with two identifiers and a header-breaking auth", { endpoint: lrs.url, auth: "Basic x\r\nX-Evil: 1", actor: JSON.stringify({ mbox: "mailto:a@b.c", openid: "http://x" }) }],
    ["credentials in the endpoint", { endpoint: lrs.url.replace("http://", "http://user:pw@"), auth: AUTH, actor: JSON.stringify(ACTOR) }],
  ];
  const before = lrs.requests.length;
  for (const [label, params] of cases) {
    const s = await launch({ ...params, view: "<script>alert(1)</script>", activity_id: "\"><img src=x onerror=alert(1)>" });
    assert.equal(await s.frame.evaluate(() => window.attentionLms.mode), "none", label);
    const text = await s.frame.evaluate(() => document.getElementById("lms-notice").textContent);
    assert.match(text, /not given a usable learning record store/, label);
    await s.frame.evaluate(() => window.attentionExplainer.setState({ checks: { cost: { answer: "9", question: "", right: false, passed: false } } }));
    await frames(s.frame, 4);
    assert.equal(await s.frame.evaluate(() => document.getElementById("lms-notice").textContent), text, `${label}: said once`);
    assert.equal(await s.frame.evaluate(() => JSON.parse(localStorage.getItem("attention-explainer:xapi")).checks.cost.answer), "9", `${label}: kept`);
    assert.equal(await s.frame.evaluate(() => document.querySelectorAll("img, script[src*=alert]").length), 0, label);
    assert.deepEqual(s.errors, [], label);
    await s.context.close();
  }
  assert.equal(lrs.requests.length, before, "no request reached the LRS");
});
