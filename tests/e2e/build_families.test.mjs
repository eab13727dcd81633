// End-to-end: the Build view's program for a head of each kind of family prints the weights the page
// shows, within 1e-4, run by NumPy: a Gemma 3 head (q/k norm, RoPE turned in the program, a sliding
// window, query_pre_attn_scalar's factor, one K/V head shared), a Gemma 2 head (its soft-cap, the
// alternating window) and a Llama head with llama3-scaled RoPE on a shared K/V head.
// Not the views' own tests (family_views.test.mjs) and not GPT-2's program (heads.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { serveStatic, launchBrowser, openExplainer, frames } from "./harness.mjs";
import { makeFamilyModel } from "../models/fixtures.mjs";

const run = promisify(execFile);
const SENTENCE = "The animal didn't cross the street because it was too tired to walk";
const CASES = [
  ["gemma3 layer 1 (local, window 3), head 2", { family: "gemma3_text", layers: 3, heads: 4, kv_heads: 1, head_dim: 8, d_model: 16,
    window: 3, sliding_pattern: 3, query_pre_attn_scalar: 12, rope_theta: 1e6, tokenizer: "llama2", seed: 5 }, { layer: 1, head: 2 }],
  ["gemma2 layer 0 (soft-capped, window 4), head 1", { family: "gemma2", layers: 2, heads: 2, kv_heads: 2, head_dim: 8, d_model: 16,
    window: 4, attn_softcap: 2, final_softcap: 20, tokenizer: "llama2", seed: 6 }, { layer: 0, head: 1 }],
  ["llama layer 1 (llama3 RoPE), head 3 on a shared K/V head", { family: "llama", layers: 2, heads: 4, kv_heads: 2, d_model: 16,
    rope: "llama3", rope_factor: 8, tokenizer: "llama2", seed: 7 }, { layer: 1, head: 3 }],
];

let server, browser, work;
const models = [];
before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "build-families-"));
  for (const [name, options] of CASES) {
    const dir = makeFamilyModel(options);
    const folder = name.split(" ")[0];
    models.push(fs.readdirSync(dir).map((f) => ({ name: `${folder}/${f}`, b64: fs.readFileSync(path.join(dir, f)).toString("base64") })));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  [server, browser] = await Promise.all([serveStatic(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

for (const [index, [name, , choice]] of CASES.entries()) {
  test(`build: the program of ${name} prints the page's weights`, async () => {
    const { page, context, errors } = await openExplainer(browser, server.url + "?view=build");
    const info = await page.evaluate((list) => window.attentionExplainer.loadModel({
      files: list.map(({ name: n, b64 }) => ({ name: n, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), models[index]);
    const s = await page.evaluate(({ model, layer, head, sentence }) => window.attentionExplainer.setState({ model, layer, head,
      sentence, view: "build" }), { model: info.name, ...choice, sentence: SENTENCE });
    await frames(page, 3);
    const build = (await page.evaluate(() => window.attentionExplainer.getState())).view_data;
    assert.equal(build.from_qkv, true, "a family head is written from its own q, k and v");
    const program = path.join(work, `head${index}.py`);
    fs.writeFileSync(program, build.numpy);
    const { stdout } = await run("/usr/bin/python3", [program]);
    const lines = stdout.trim().split("\n");
    const printed = lines.slice(1, lines.indexOf("output")).map((l) => l.split(" ").map(Number));
    assert.equal(printed.length, s.weights.length);
    let worst = 0;
    printed.forEach((row, i) => row.forEach((w, j) => { worst = Math.max(worst, Math.abs(w - s.weights[i][j])); }));
    assert.ok(worst < 1e-4, `the program's weights within 1e-4 of the page's (worst ${worst})`);
    if (name.startsWith("gemma3") || name.startsWith("llama")) assert.match(build.numpy, /RoPE/);
    if (name.startsWith("gemma2")) assert.match(build.numpy, /soft-cap/);
    assert.match(build.numpy, /sliding window|RoPE/);
    console.log(`# ${name}: T ${s.weights.length}, worst ${worst.toExponential(1)}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}
