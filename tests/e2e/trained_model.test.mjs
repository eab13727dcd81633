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

test("the shipped trained model is offered at once and predicts as the CLI does from the same folder", async () => {
  assert.ok(fs.existsSync(path.join(SHIPPED, "model.safetensors")), "the native build trains build/native/trained");
  const { page, context, errors } = await openExplainer(browser, server.url);
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  const info = s.models.find((m) => m.name === NAME);
  assert.ok(info, `models at load: ${JSON.stringify(s.models.map((m) => m.name))}`);
  assert.deepEqual([info.layers, info.heads, info.d_model], [1, 2, 32]);
  assert.equal(s.model, "handmade", "offered, not chosen: the lesson's hand-made model stays first");

  s = await page.evaluate((name) => window.attentionExplainer.setState({ model: name, view: "heads" }), NAME);
  assert.equal(s.model, NAME);
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
  assert.ok(!requests.some((u) => /safetensors|config\.json|tokenizer\.json/.test(u)), `no download: ${requests.join(" ")}`);
  assert.deepEqual(errors, []);
  await context.close();
});
