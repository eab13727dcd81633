// End-to-end: the explainer page in headless Chromium. Loads with no console error, the lesson's
// "it" → "animal", compute() against the core's known numbers, real mouse clicks, DPR 1 and 2.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, clickRect } from "./harness.mjs";

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../README.md");
const EMBEDDING_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/embedding.md");

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test("page loads with no console error; 'it' attends most to 'animal'", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.sentence, "The animal didn't cross the street because it was tired");
  assert.equal(s.token_text, "it");
  const row = s.weights[s.token];
  const best = row.indexOf(Math.max(...row));
  assert.equal(s.tokens[best], "animal");
  assert.ok(row[best] > 0.5, `weight on animal ${row[best]}`);
  for (const r of s.weights) assert.ok(Math.abs(r.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  assert.equal(s.view, "flow");
  await frames(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the first page load is under 1 MB gzip; the train and model workers and model files only come on request", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const bodies = [];
  page.on("response", (r) => bodies.push(r.body().then((b) => [new URL(r.url()).pathname, zlib.gzipSync(b, { level: 9 }).length], () => null)));
  await page.goto(server.url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await frames(page, 10);
  const files = (await Promise.all(bodies)).filter(Boolean);
  const total = files.reduce((n, [, bytes]) => n + bytes, 0);
  console.log(`first load: ${files.length} files, ${(total / 1024).toFixed(0)} KiB gzip: ` +
    files.map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)}`).join(", "));
  assert.ok(total < 1e6, `${total} bytes gzip`);
  assert.ok(!files.some(([name]) => /train_worker|model_worker|safetensors|fflate/.test(name)), files.map(([n]) => n).join(" "));
  // the train view asks for its worker
  const more = bodies.length;
  await page.evaluate(() => window.attentionExplainer.setState({ view: "train" }));
  await page.waitForFunction(() => window.attentionExplainer.getState().train.worker === "ready");
  const later = (await Promise.all(bodies.slice(more))).filter(Boolean).map(([name]) => name);
  assert.ok(later.some((n) => /train_worker\.wasm$/.test(n)), later.join(" "));
  await context.close();
});

test("compute() gives the lesson's Derive numbers and the CLI's error messages", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const r = await page.evaluate(() => window.attentionExplainer.compute(
    { Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]], V: [[1, 2], [3, 4], [5, 6]] }));
  const expectW = [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]];
  const expectO = [[3.0, 4.0], [3.41, 4.41], [3.51, 4.51]];
  r.weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - expectW[i][j]) < 0.006, `w${i}${j}=${w}`)));
  r.output.forEach((row, i) => row.forEach((o, j) => assert.ok(Math.abs(o - expectO[i][j]) < 0.006, `o${i}${j}=${o}`)));
  for (const backend of ["scalar", "eigen", "simd"]) {
    const c = await page.evaluate((b) => window.attentionExplainer.compute(
      { Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1], [2]], causal: true, backend: b }), backend);
    assert.equal(c.scores[0][1], null);
    assert.equal(c.weights[0][1], 0);
    assert.equal(c.backend, backend);
  }
  const message = await page.evaluate(() => {
    try { window.attentionExplainer.compute({ Q: [[1, 2], [3]], K: [[1, 2]], V: [[1]] }); return "no error"; }
    catch (e) { return e.message; }
  });
  assert.match(message, /ragged/);
  await context.close();
});

test("setState changes inputs and views; invalid values throw naming the key", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights", causal: true }));
  assert.equal(s.view, "weights");
  assert.equal(s.causal, true);
  for (let i = 0; i < s.weights.length; i++)
    for (let j = i + 1; j < s.weights.length; j++) assert.equal(s.weights[i][j], 0);
  for (const [partial, key] of [[{ temperature: -1 }, "temperature"], [{ view: "nope" }, "view"],
    [{ sentence: "" }, "sentence"], [{ token: "zebra" }, "token"], [{ causal: "yes" }, "causal"], [{ colour: 1 }, "colour"]]) {
    const message = await page.evaluate((p) => {
      try { window.attentionExplainer.setState(p); return "no error"; } catch (e) { return e.message; }
    }, partial);
    assert.ok(message.startsWith(key + ":"), `${JSON.stringify(partial)} -> ${message}`);
  }
  const after = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(after.sentence, s.sentence, "a refused change keeps the last good state");
  assert.deepEqual(errors, []);
  await context.close();
});

test("?view= and other URL parameters open that state; bad ones only warn", async () => {
  const { page, context, errors } = await openExplainer(browser,
    server.url + "?view=library&causal=1&token=animal&temperature=abc&bogus=1");
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.view, "library");
  assert.equal(s.causal, true);
  assert.equal(s.token_text, "animal");
  assert.equal(s.temperature, 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a real mouse click on the causal checkbox changes the weights", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const before = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(before.causal, false);
  assert.ok(before.weights[0][1] > 0);
  // The checkbox is in the controls column; find its label's position from the app itself.
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("causal"));
  assert.ok(box, "the app reports where the causal checkbox is");
  await clickRect(page, box, { atX: box.h / 2 });
  const after = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(after.causal, true);
  assert.equal(after.weights[0][1], 0);
  await context.close();
});

for (const dpr of [1, 2]) {
  test(`screenshot at devicePixelRatio ${dpr} is not blank and sharp; the canvas follows a resize`, async () => {
    const { page, context, errors } = await openExplainer(browser, server.url, { dpr });
    await frames(page, 5);
    const backing = await page.evaluate(() => [document.getElementById("canvas").width, document.getElementById("canvas").height]);
    assert.deepEqual(backing, [1280 * dpr, 800 * dpr], "backing store = CSS size × DPR");
    // the page resized (a window, or an iframe a course page resizes): the canvas follows
    await page.setViewportSize({ width: 900, height: 640 });
    await page.waitForFunction((expected) => {
      const c = document.getElementById("canvas");
      return c.width === expected[0] && c.height === expected[1];
    }, [900 * dpr, 640 * dpr], { timeout: 10000 });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForFunction((expected) => document.getElementById("canvas").width === expected, 1280 * dpr,
      { timeout: 10000 });
    await frames(page, 3);
    const { png } = await screenshot(page, `explainer-dpr${dpr}`);
    const { colours, width } = await distinctColours(page, png);
    assert.equal(width, 1280 * dpr);
    assert.ok(colours > 50, `screenshot has only ${colours} colours`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

// [SECTION] The table of inputs: docs/embedding.md, permalinks, Reset and the learner's stored progress

/** docs/embedding.md's rows for the table of inputs (attentionExplainer.inputs), one per input. */
function inputRows(table) {
  const domain = (f) => {
    if (f.type === "integer" || f.type === "number") return `${f.min} to ${f.max}`;
    if (f.type === "token") return `0 to T − 1, or a word`;
    if (f.type === "choice" || f.type === "views") return f.choices.map((c) => `\`${c}\``).join(" ");
    if (f.type === "matrix") return `${f.rows} rows of ${f.cols} numbers`;
    return "";
  };
  const url = { permalink: "yes", read: "read", no: "no" };
  return table.map((f) => `| \`${f.name}\` | ${f.type} | \`${JSON.stringify(f.default)}\` | ${domain(f)} | ` +
    `${url[f.url]} | ${f.group === "lesson" ? "reset" : "kept"} | ${f.doc} |`).join("\n");
}

test("docs/embedding.md's list of inputs is the table of inputs, and the README's list of views the app's", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const table = await page.evaluate(() => window.attentionExplainer.inputs);
  const expected = inputRows(table);
  const readme = fs.readFileSync(README, "utf8");
  const views = readme.split("| view | what it shows |")[1].split("\n\n")[0].match(/^\| `[a-z_]+` \|/gm).map((r) => r.slice(3, -3));
  assert.deepEqual(views, table.find((f) => f.name === "view").choices, "README's table of views, in tab order");
  const block = fs.readFileSync(EMBEDDING_DOC, "utf8").split("<!-- inputs: begin -->")[1]?.split("<!-- inputs: end -->")[0];
  assert.ok(block, "docs/embedding.md has the inputs block between <!-- inputs: begin --> and <!-- inputs: end -->");
  const rows = block.trim().split("\n").slice(2).join("\n");  // after the header and the rule
  assert.equal(rows, expected, "docs/embedding.md's inputs differ from the table (src/state/input_table.cpp), which says:\n" + expected);
  await context.close();
});

const STATES = Number(process.env.PERMALINK_STATES || 200);
test(`${STATES} random valid states -> permalink -> a fresh page: the same inputs and the same weights`, async () => {
  // A server that lets the browser keep the wasm and the scripts (as a real one does): a fresh page still
  // starts the explainer from the link alone, without compiling the wasm again; three fresh pages at a time.
  const cached = await serveStatic(undefined, { cache: true });
  const { page, context, errors } = await openExplainer(browser, cached.url);
  const table = await page.evaluate(() => window.attentionExplainer.inputs);
  const linked = table.filter((f) => f.url === "permalink");
  let seed = 20261201;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const SENTENCES = ["the cat saw the dog and the bird saw the cat", "Ça va? the animal & the street = 1+1 #it %20",
    "it", "The animal didn't cross the street because it was tired", "a b a b a"];
  const fresh = await Promise.all([0, 1, 2].map(() => context.newPage()));
  for (const f of fresh) f.on("pageerror", (e) => errors.push(String(e)));
  const randomState = async () => {
    const partial = {};
    for (const f of linked) {
      if (["model", "layer", "head"].includes(f.name) || f.type === "token") continue;  // no loaded model; tokens below
      if (rand() < 0.3) continue;  // some inputs stay at their defaults
      if (f.type === "boolean") partial[f.name] = rand() < 0.5;
      else if (f.type === "integer") partial[f.name] = f.min + Math.floor(rand() * (f.max - f.min + 1));
      else if (f.type === "number") partial[f.name] = Math.max(f.min, Math.fround(f.min + rand() * (f.max - f.min)));
      else if (f.name === "weights_show") partial[f.name] = pick(["weights", "value_weighted"]);  // rollout: a loaded model's
      else if (f.type === "choice") partial[f.name] = pick(f.choices);
      else if (f.type === "string") partial[f.name] = pick(SENTENCES);
      else if (f.type === "matrix")  // doubles: the state keeps floats, and the link must carry those exactly
        partial[f.name] = Array.from({ length: f.rows }, () => Array.from({ length: f.cols }, () => rand() * 20 - 10));
    }
    if (partial.break_d) partial.break_d = Math.min(partial.break_d, 1024);  // the full range is slow, not different
    return page.evaluate(([p, r]) => {
      const api = window.attentionExplainer;
      const defaults = Object.fromEntries(api.inputs.filter((f) => f.url === "permalink" && f.type !== "token")
        .map((f) => [f.name, f.default]));
      api.setState({ ...defaults, ...p });
      api.setState({ token: Math.floor(r * api.getState().tokens.length) });
      return { state: api.getState(), link: api.permalink() };
    }, [partial, rand()]);
  };
  const reopen = async (tab, { state, link }) => {
    await tab.goto(link);
    const reopened = await tab.evaluate(() => window.attentionExplainer.ready.then((api) => api.getState()));
    for (const f of linked) assert.deepEqual(reopened[f.name], state[f.name], `${f.name} after ${link}`);
    assert.equal(reopened.token_text, state.token_text, link);
    assert.deepEqual(reopened.weights, state.weights, `weights after ${link}`);
  };
  for (let n = 0; n < STATES; n += fresh.length) {
    const batch = [];
    for (let k = 0; k < fresh.length && n + k < STATES; k++) batch.push(await randomState());
    await Promise.all(batch.map((b, k) => reopen(fresh[k], b)));
  }
  assert.deepEqual(errors, []);
  await context.close();
  await cached.close();
});

test("Reset restores the lesson's inputs and keeps the Prove-it ticks, the theme, the motion and the view", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  await page.evaluate(() => window.attentionExplainer.setState({ checklist: 5, theme: "light", reduced_motion: true,
    view: "weights", causal: true, temperature: 3, sentence: "the cat saw the dog" }));
  await frames(page);
  await clickRect(page, await page.evaluate(() => window.attentionExplainer.itemRect("reset")));
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.causal, false);
  assert.equal(s.temperature, 1);
  assert.equal(s.sentence, "The animal didn't cross the street because it was tired");
  assert.deepEqual([s.checklist, s.theme, s.reduced_motion, s.view], [5, "light", true, "weights"]);
  await context.close();
});

test("stored progress: the old format is read, corrupt or newer data is ignored with a warning and kept aside", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const warnings = [], errors = [];
  page.on("console", (m) => {
    if (m.type() === "warning") warnings.push(m.text());
    if (m.type() === "error" && !m.location().url.endsWith("favicon.ico")) errors.push(m.text());  // style.css's page asks for one
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  const KEY = "attention-explainer:checklist";
  const open = async (stored) => {
    await page.goto(server.url + "style.css");  // the same origin without the explainer: storage set before it starts
    await page.evaluate(([k, v]) => { localStorage.clear(); if (v !== null) localStorage.setItem(k, v); }, [KEY, stored]);
    await page.goto(server.url + "index.html?view=practice");
    return page.evaluate(() => window.attentionExplainer.ready.then((api) => api.getState().checklist));
  };
  const stored = () => page.evaluate((k) => [localStorage.getItem(k), localStorage.getItem(k + ":unreadable")], KEY);
  const tick = async (ticks) => { await page.evaluate((t) => window.attentionExplainer.setState({ checklist: t }), ticks); await frames(page, 3); };

  assert.equal(await open("5"), 5, "version 0: the bare number");
  await tick(7);
  assert.deepEqual(await stored(), [JSON.stringify({ version: 2, checklist: 7, checks: {} }), null]);
  assert.equal(await open(JSON.stringify({ version: 1, checklist: 9 })), 9);

  for (const bad of ["{not json", JSON.stringify({ version: 99, checklist: 3, more: [] }), JSON.stringify({ version: 1, checklist: -4 })]) {
    warnings.length = 0;
    assert.equal(await open(bad), 0, bad);
    assert.ok(warnings.some((w) => w.includes("stored progress ignored")), `a warning for ${bad}: ${warnings}`);
    await tick(2);
    assert.deepEqual(await stored(), [JSON.stringify({ version: 2, checklist: 2, checks: {} }), bad], "kept aside, not lost");
  }
  // Two pages of the same learner: each save changes only the ticks its page changed.
  await open(JSON.stringify({ version: 1, checklist: 0 }));
  const other = await context.newPage();
  await other.goto(server.url + "index.html?view=practice");
  await other.evaluate(() => window.attentionExplainer.ready);
  await tick(1);
  await other.evaluate(() => window.attentionExplainer.setState({ checklist: 4 }));
  // (saved on the frame after the change: under load that frame can come late, so wait for it, up to 5 s)
  await other.waitForFunction((k) => JSON.parse(localStorage.getItem(k) || "{}").checklist === 5, KEY, { timeout: 5000 }).catch(() => {});
  assert.equal(JSON.parse((await stored())[0]).checklist, 5, "both pages' ticks are kept");
  assert.deepEqual(errors, []);
  await context.close();
});
