// End-to-end: the model trained at build time (build/native/trained, embedded in the wasm) is in the
// page's model picker the moment it opens, with no download, and predicts what the native CLI
// predicts from the same folder. Not the trainer's tests (tests/cli/train.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours } from "./harness.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = path.join(ROOT, "build/native/attention_cli");
const SHIPPED = path.join(ROOT, "build/native/trained");
const NAME = "trained (built in)";
// Held-out triples (corpus_heldout_triple: animal, street, tired/wide; cat, road, scared): never
// seen in training, so the right referent is the rule learned, not a memorised sentence.
const PROBES = [
  ["the animal didn't cross the street because it was tired . it refers to the", "animal"],
  ["the animal didn't cross the street because it was wide . it refers to the", "street"],
  ["the road was too much for the cat because it was so scared . it refers to the", "cat"],
];

let server, browser;
before(async () => { [server, browser] = await Promise.all([serveStatic(), launchBrowser()]); });
after(async () => {
  await browser?.close();
  await server?.close();
});

test("the shipped trained model is offered at once, fetched when chosen, and predicts as the CLI does from the same folder", async () => {
  assert.ok(fs.existsSync(path.join(SHIPPED, "model.safetensors")), "the native build trains build/native/trained");
  const { page, context, errors } = await openExplainer(browser, server.url);
  const requests = [];
  page.on("request", (r) => requests.push(new URL(r.url()).pathname));
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.deepEqual(s.loading.on_request, [NAME], "offered in the picker");
  assert.ok(!s.models.some((m) => m.name === NAME), "not loaded before it is chosen");
  assert.equal(s.model, "handmade", "offered, not chosen: the lesson's hand-made model stays first");

  // setState naming it returns a Promise: the folder is fetched once, then the state applies
  s = await page.evaluate((name) => window.attentionExplainer.setState({ model: name, view: "heads" }), NAME);
  assert.equal(s.model, NAME);
  assert.equal(s.view, "heads");
  assert.deepEqual(s.loading.on_request, []);
  const info = s.models.find((m) => m.name === NAME);
  assert.deepEqual([info.layers, info.heads, info.d_model], [1, 2, 32]);
  assert.deepEqual(requests.filter((u) => u.includes("/models/trained/")).sort(),
    ["/models/trained/config.json", "/models/trained/model.safetensors", "/models/trained/tokenizer.json"]);
  for (const [text, referent] of PROBES) {
    const trace = await page.evaluate((t) => window.attentionExplainer.modelTrace({ text: t, top: 3 }), text);
    const r = spawnSync(CLI, ["model", "--dir", SHIPPED, "--text", text, "--top", "3"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const native = JSON.parse(r.stdout);
    assert.deepEqual(trace.token_ids, native.token_ids, `${text}: tokens`);
    const last = trace.next[trace.next.length - 1];
    assert.equal(last[0].token, referent, `${text}: ${JSON.stringify(last)}`);
    // the wasm (SIMD sums) and the native build round differently: the same numbers within 1e-5
    trace.next.forEach((options, t) => options.forEach((o, k) => {
      const n = native.next[t][k];
      assert.ok(Math.abs(o.p - n.p) < 1e-5, `${text}: next[${t}][${k}] ${o.token} ${o.p} vs ${n.token} ${n.p}`);
      if (Math.abs(o.p - n.p) > 1e-6 || o.id === n.id) assert.equal(o.id, n.id, `${text}: next[${t}][${k}] id`);
    }));
    console.log(`# ${referent}: p = ${last[0].p.toFixed(4)} in the page, ${native.next[native.next.length - 1][0].p.toFixed(4)} natively`);
  }
  await page.evaluate((text) => window.attentionExplainer.setState({ sentence: text, layer: 0, head: 0 }), PROBES[0][0]);
  await frames(page, 3);
  const shot = await screenshot(page, "trained-model-heads");
  assert.ok((await distinctColours(page, shot.png)).colours > 20, "the heads view draws the trained model");
  assert.equal(requests.filter((u) => /safetensors/.test(u)).length, 1, `fetched once: ${requests.join(" ")}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a permalink naming the trained model fetches it before ready; a missing folder is a message, not a broken page", async () => {
  let { page, context, errors } = await openExplainer(browser, server.url + `?model=${encodeURIComponent(NAME)}&head=1&view=weights`);
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.deepEqual([s.model, s.head, s.view], [NAME, 1, "weights"]);
  assert.deepEqual(errors, []);
  await context.close();

  ({ page, context, errors } = await openExplainer(browser, server.url));
  await page.route("**/models/trained/model.safetensors", (route) => route.fulfill({ status: 404, body: "" }));
  const failure = await page.evaluate((name) => window.attentionExplainer.setState({ model: name }).then(() => null, (e) => e.message), NAME);
  assert.match(failure, /trained \(built in\): models\/trained\/model\.safetensors: HTTP 404/);
  s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.model, "handmade", "the current model stays");
  assert.match(s.loading.error, /HTTP 404/);
  assert.deepEqual(s.loading.on_request, [NAME], "still offered: it can be tried again");
  await page.unroute("**/models/trained/model.safetensors");
  s = await page.evaluate((name) => window.attentionExplainer.setState({ model: name }), NAME);
  assert.equal(s.model, NAME);
  await context.close();
});
