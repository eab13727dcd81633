// The H5P content type in h5p-standalone (H5P's player without a server), from the built .h5p extracted:
// the statements its dispatcher hears for a scripted session (wrong, right, completed) are the expected
// ones and each passes xapi-validation; the question-type contract agrees with the page's checks; the
// saved state resumes; and the package passes @lumieducation/h5p-server's checks (whitelist, library.json).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { serveStatic, launchBrowser, frames } from "./harness.mjs";
import { extractedPackage, explainerFrame, driver, allAnswered, until, NODE_MODULES } from "./lms_harness.mjs";
import { H5P_LIBRARY } from "../../tools/package_lms.mjs";

const require = createRequire(import.meta.url);
const validateStatement = require("xapi-validation").default;
let pkg, server, browser;
before(async () => {
  pkg = extractedPackage("h5p");
  fs.cpSync(path.join(NODE_MODULES, "h5p-standalone/dist"), path.join(pkg.root, "player"), { recursive: true });
  // a second content of the same library: another teacher's settings (two checks count, the Cost view)
  const other = path.join(pkg.root, "content-b");
  fs.mkdirSync(other);
  fs.writeFileSync(path.join(other, "content.json"), JSON.stringify({ view: "cost", sentence: "the cat sat on the mat", model: "handmade",
    checks: { flow: false, weights: true, library: false, steps: false, break: false, mistakes: false, build: false, cost: false, compare: false, derive: true },
    passPercentage: 50, height: 700 }));
  fs.writeFileSync(path.join(pkg.root, "host.html"), `<!doctype html><link rel="icon" href="data:,"><body style="margin:0">
<div id="h5p" style="width:1200px"></div>
<script src="player/main.bundle.js"></script>
<script>
  window.statements = [];
  const q = new URLSearchParams(location.search);
  const options = { h5pJsonPath: "h5p", frameJs: "player/frame.bundle.js", frameCss: "player/styles/h5p.css",
    xAPIObjectIRI: "https://course.example/h5p/attention", user: { name: "Ada Lovelace", mail: "ada@example.org" },
    ajax: { contentUserDataUrl: "user-data/:contentId/:dataType/:subContentId" }, ...(q.get("content") ? { contentJsonPath: q.get("content") } : {}) };
  // H5P core reads contentUserData[subContentId][dataType] (h5p-standalone passes it as given)
  // H5P core reads contentUserData[subContentId][dataType] as given (not the form h5p-standalone's README shows)
  if (window.PREVIOUS) Object.assign(options, { contentUserData: [{ state: window.PREVIOUS }], saveFreq: 30 });
  new H5PStandalone.H5P(document.getElementById("h5p"), options).then(() => {
    H5P.externalDispatcher.on("xAPI", (e) => statements.push(JSON.parse(JSON.stringify(e.data.statement))));
    window.h5pLoaded = true;
  }, (e) => { window.h5pFailed = String(e); });
</script></body>`);
  server = await serveStatic(pkg.root);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.close(); });

async function play(query = "", previous) {
  const context = await browser.newContext({ viewport: { width: 1220, height: 900 } });
  if (previous) await context.addInitScript((p) => { window.PREVIOUS = p; }, previous);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (/wasm|WebAssembly/i.test(m.text())) errors.push(m.text()); });  // the renamed wasm compiles quietly
  await page.goto(server.url + "host.html" + query);
  await until(() => page.evaluate(() => window.h5pLoaded || window.h5pFailed), "the H5P player", 30000);
  assert.equal(await page.evaluate(() => window.h5pFailed), undefined);
  const frame = await explainerFrame(page);
  await frames(frame, 4);
  // the content type's instance lives in the frame that runs H5P
  let h5pFrame = null;
  for (const f of page.frames()) if (await f.evaluate(() => !!(window.H5P && H5P.instances && H5P.instances.length)).catch(() => false)) h5pFrame = f;
  assert.ok(h5pFrame, "an H5P instance");
  const instance = (fn, arg) => h5pFrame.evaluate(fn, arg);
  return { context, page, frame, errors, instance, drive: driver(page, frame) };
}
const statements = (page) => page.evaluate(() => window.statements);
const verbOf = (s) => s.verb.id.split("/").pop();

test("a scripted session: the dispatcher's statements (attempted, answered wrong and right, completed, passed) are valid xAPI", async () => {
  const s = await play();
  await until(async () => (await statements(s.page)).some((st) => verbOf(st) === "attempted"), "attempted");
  await s.drive.openView("weights");
  const { wrong, right, choices } = await s.drive.weightsChoices();
  await s.drive.click(`quiz:choice:${wrong}`);
  await s.drive.click(`quiz:choice:${right}`);
  await s.frame.evaluate(() => window.attentionExplainer.setState({ view: "derive", derive_revealed: 0 }));
  await frames(s.frame, 4);
  const w = await s.frame.evaluate(() => window.attentionExplainer.getState().view_data.weights);
  await s.drive.type("derive:cell:4:0:0", w[0][0].toFixed(2));
  await until(async () => (await statements(s.page)).length >= 4, "four statements");
  let got = await statements(s.page);
  const main = "https://course.example/h5p/attention";
  assert.deepEqual(got.map(verbOf), ["attempted", "answered", "answered", "answered"]);
  assert.equal(got[0].object.id, main);
  const [, first, second, cell] = got;
  assert.equal(first.object.id, main + "?subContentId=check-weights");
  assert.equal(first.result.success, false);
  assert.equal(second.result.success, true);
  assert.equal(first.object.definition.interactionType, "choice");
  assert.deepEqual(first.object.definition.choices.map((c) => c.description["en-US"]), choices);
  assert.equal(second.result.response, encodeURIComponent(choices[right]).replace(/[~!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()));
  assert.equal(cell.object.id, main + "?subContentId=check-derive.weights.0.0");
  assert.equal(cell.object.definition.interactionType, "numeric");
  assert.equal(cell.result.response, String(Number(w[0][0].toFixed(2))));
  assert.equal(cell.context.contextActivities.parent[0].id, main);
  // the contract, against the page's own marks: the weights check right (45) + one Derive cell (1) of 450
  const progress = await s.frame.evaluate(() => window.attentionExplainer.getSummary().progress);
  assert.equal(progress.weights.correct, 1);
  assert.equal(progress.derive.correct, 1);
  assert.equal(await s.instance(() => H5P.instances[0].getScore()), 46);
  assert.equal(await s.instance(() => H5P.instances[0].getMaxScore()), 450);
  assert.equal(await s.instance(() => H5P.instances[0].getAnswerGiven()), true);
  const xapiData = await s.instance(() => H5P.instances[0].getXAPIData());
  assert.deepEqual(xapiData.statement.result.score, { min: 0, max: 450, raw: 46, scaled: 0.1022 });
  // completed: everything answered (9 views right, Derive's cells all wrong: 405 of 450, passed at 80 %)
  await s.frame.evaluate((checks) => window.attentionExplainer.setState({ checks }), allAnswered({ viewsRight: true }));
  await until(async () => (await statements(s.page)).some((st) => verbOf(st) === "passed"), "passed");
  got = await statements(s.page);
  const completed = got.find((st) => verbOf(st) === "completed"), passed = got.find((st) => verbOf(st) === "passed");
  for (const st of [completed, passed]) {
    assert.equal(st.object.id, main);
    assert.deepEqual(st.result.score, { min: 0, max: 450, raw: 405, scaled: 0.9 });
    assert.equal(st.result.completion, true);
    assert.equal(st.result.success, true);
  }
  assert.equal(got.filter((st) => verbOf(st) === "failed").length, 0);
  assert.equal(await s.instance(() => H5P.instances[0].getScore()), 405);
  for (const st of got) {
    assert.deepEqual(validateStatement(st), [], `${verbOf(st)} ${st.object.id} is valid xAPI`);
    assert.equal(st.actor.mbox, "mailto:ada@example.org", "the learner H5P names");
  }
  // a statement xapi-validation refuses, so the check above can fail
  assert.notDeepEqual(validateStatement({ ...got[1], verb: { id: "answered" } }), []);
  // resume: the state H5P saves brings the answers back in a new player
  const state = await s.instance(() => H5P.instances[0].getCurrentState());
  assert.equal(typeof state.suspend, "string");
  // showSolutions and resetTask
  await s.instance(() => H5P.instances[0].showSolutions());
  assert.equal(await s.frame.evaluate(() => window.attentionExplainer.getState().derive_revealed), 6);
  await s.instance(() => H5P.instances[0].resetTask());
  assert.equal(await s.instance(() => H5P.instances[0].getScore()), 0);
  assert.equal(await s.instance(() => H5P.instances[0].getAnswerGiven()), false);
  // a second go after the reset, every view wrong: completed, then failed (0 of 450)
  await s.frame.evaluate((checks) => window.attentionExplainer.setState({ checks }), allAnswered({ viewsRight: false }));
  await until(async () => (await statements(s.page)).some((st) => verbOf(st) === "failed"), "failed");
  const failed = (await statements(s.page)).find((st) => verbOf(st) === "failed");
  assert.deepEqual(failed.result.score, { min: 0, max: 450, raw: 0, scaled: 0 });
  assert.equal(failed.result.success, false);
  assert.deepEqual(validateStatement(failed), []);
  assert.deepEqual(s.errors, []);
  await s.context.close();

  const again = await play("", JSON.stringify(state));
  const checks = await again.frame.evaluate(() => window.attentionExplainer.getState().checks);
  assert.equal(checks.weights.right, true);
  assert.equal(Object.keys(checks).length, 54, "9 views + 45 cells");
  assert.equal(await again.instance(() => H5P.instances[0].getScore()), 405);
  await again.context.close();
});

test("the teacher's settings: the view, the sentence and which checks count", async () => {
  const s = await play("?content=content-b");
  const state = await s.frame.evaluate(() => window.attentionExplainer.getState());
  assert.equal(state.view, "cost");
  assert.equal(state.sentence, "the cat sat on the mat");
  assert.equal(await s.instance(() => H5P.instances[0].getMaxScore()), 90, "weights and Derive count: 2 × 45");
  // the train view's worker starts from the library too (its wasm renamed like the page's)
  await s.frame.evaluate(() => window.attentionExplainer.setState({ view: "train" }));
  await until(() => s.frame.evaluate(() => window.attentionExplainer.getState().train.worker === "ready"), "the train worker", 30000);
  // and so does the built-in trained model (its weights renamed too)
  const trained = await s.frame.evaluate(() => window.attentionExplainer.setState({ model: "trained (built in)" }));
  assert.equal(trained.model, "trained (built in)");
  await s.frame.evaluate(() => window.attentionExplainer.setState({ model: "handmade" }));
  await s.frame.evaluate(() => window.attentionExplainer.setState({ view: "cost" }));
  await s.frame.evaluate(() => window.attentionExplainer.setState({ checks: { cost: { answer: "1", question: "", right: true, passed: true } } }));
  await frames(s.frame, 6);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await s.instance(() => H5P.instances[0].getScore()), 0, "a check that does not count adds nothing");
  assert.equal((await statements(s.page)).filter((st) => verbOf(st) === "answered").length, 0, "and is not reported");
  assert.deepEqual(s.errors, []);
  await s.context.close();
});

test("the package passes @lumieducation/h5p-server's checks: file types on the whitelist, library.json, sizes", async () => {
  const { H5PConfig } = require("@lumieducation/h5p-server");
  const PackageValidator = require("@lumieducation/h5p-server/build/src/PackageValidator").default;
  const config = new H5PConfig(undefined);
  const validator = new PackageValidator(config, { libraryExists: async () => false });
  await validator.validateFileSizes(pkg.file);
  await validator.validateExtractedPackage(pkg.dir, true, true, false);
  assert.ok(pkg.names.some((n) => n.endsWith("explainer.wasm.txt")), "the wasm is carried under an allowed name");
  assert.ok(!pkg.names.some((n) => /\.(wasm|html)$/.test(n)), "no .wasm, no .html");
  const library = JSON.parse(fs.readFileSync(path.join(pkg.dir, H5P_LIBRARY, "library.json"), "utf8"));
  assert.deepEqual(library.preloadedDependencies, undefined, "no H5P.Question, no JoubelUI: no dependencies at all");
  // the same checks refuse a .wasm in the library (so they can fail)
  const bad = path.join(pkg.root, "bad");
  fs.cpSync(pkg.dir, bad, { recursive: true });
  fs.writeFileSync(path.join(bad, H5P_LIBRARY, "explainer/simd/explainer.wasm"), "\0asm");
  await assert.rejects(validator.validateExtractedPackage(bad, true, true, false));
});
