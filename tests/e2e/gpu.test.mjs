// End-to-end: the "webgl" compute backend (shaders/attention_*.frag in WebGL2, SwiftShader here)
// against "scalar" on odd shapes, masked weights exactly 0, a forced WebGL context loss survived,
// and a browser without float render targets left on the CPU with the reason.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, compareInPage } from "./harness.mjs";

const TOLERANCE = 1e-4;  // max|Δ| / max|scalar|, for weights and for output

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const ODD = [1, 3, 17, 64, 65, 300];
const SELF_SHAPES = [[1, 1], [3, 3], [17, 17], [64, 64], [65, 65], [300, 64], [1, 300], [300, 1], [17, 65], [65, 3], [3, 300]];
const CROSS_SHAPES = [[3, 17, 65, 1], [300, 65, 17, 64], [65, 300, 3, 300], [1, 300, 64, 65], [17, 1, 300, 3]];

test("compute with backend \"webgl\" matches \"scalar\" on odd self- and cross-attention shapes", async (t) => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const cases = [];
  for (const causal of [false, true]) {
    for (const [T, d] of SELF_SHAPES) cases.push({ Tq: T, Tk: T, d, dv: d, causal });
    for (const [Tq, Tk, d, dv] of CROSS_SHAPES) cases.push({ Tq, Tk, d, dv, causal });
    // the numeric domain's edges (attention.h): coldest and hottest temperature, entries up to 1e6
    for (const [temperature, magnitude] of [[0.05, 2], [20, 2], [0.05, 1e6], [20, 1e6], [1, 1e6]])
      cases.push({ Tq: 17, Tk: 65, d: 3, dv: 17, causal, temperature, magnitude });
  }
  const results = await page.evaluate(compareInPage, cases);
  let worst = 0;
  for (const r of results) {
    t.diagnostic(`${r.shape}: weights ${r.weightsError.toExponential(2)}, output ${r.outputError.toExponential(2)}`);
    assert.equal(r.backend, "webgl");
    assert.ok(r.weightsError <= TOLERANCE, `${r.shape}: weights differ by ${r.weightsError}`);
    assert.ok(r.outputError <= TOLERANCE, `${r.shape}: output differs by ${r.outputError}`);
    assert.equal(r.maskedNonzero, 0, `${r.shape}: hidden keys must get exactly 0`);
    worst = Math.max(worst, r.weightsError, r.outputError);
  }
  t.diagnostic(`worst relative error over ${results.length} shapes: ${worst.toExponential(2)}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the page's GPU check agrees on every standard shape; timings at T = 1024, d = 64", async (t) => {
  const { page, context } = await openExplainer(browser, server.url);
  const report = await page.evaluate(() => JSON.parse(Module.ccall("attn_gpu_check", "string", ["string"], ["{}"])));
  assert.equal(report.available, true, report.reason);
  for (const r of report.rows) {
    const label = `(${r.Tq}, ${r.Tk}, ${r.d}, ${r.dv})${r.causal ? " causal" : ""} temperature ${r.temperature}`;
    assert.ok(r.passed, `${label}: ${JSON.stringify(r)}`);
    // bounded draws: every pass drawn in bands within the budget; a small budget means many bands
    assert.ok(r.max_fetches_per_draw > 0 && r.max_fetches_per_draw <= r.fetch_budget, `${label}: ${JSON.stringify(r)}`);
    assert.ok(r.draws >= 5, `${label}: five passes at least`);
    if (r.fetch_budget < 1e6) assert.ok(r.draws > 40, `${label}: ${r.draws} draws under a budget of ${r.fetch_budget}`);
    if (r.Tq >= 1024) t.diagnostic(`${label}: GPU ${r.gpu_ms.toFixed(1)} ms, scalar ${r.scalar_ms.toFixed(1)} ms`);
  }
  const worst = Math.max(...report.rows.map((r) => Math.max(r.weights_error, r.output_error)));
  t.diagnostic(`${report.rows.length} shapes, worst relative error ${worst.toExponential(2)}`);
  // the public path at the same size, JSON both ways included (small integers: a short request)
  const timing = await page.evaluate(() => {
    const rows = (n, c, seed) => Array.from({ length: n }, (_, i) => Array.from({ length: c }, (_, j) => ((seed + i * 7 + j * 3) % 5) - 2));
    const request = { Q: rows(1024, 64, 1), K: rows(1024, 64, 2), V: rows(1024, 64, 3) };
    const ms = {};
    for (const backend of ["scalar", "simd", "webgl"]) {
      const start = performance.now();
      window.attentionExplainer.compute({ ...request, backend });
      ms[backend] = performance.now() - start;
    }
    return ms;
  });
  t.diagnostic(`compute() at T = 1024, d = 64 (with JSON): ${JSON.stringify(timing)}`);
  await context.close();
});

test("unknown backends are refused with the list of available ones", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const message = await page.evaluate(() => {
    try { window.attentionExplainer.compute({ Q: [[1]], K: [[1]], V: [[1]], backend: "cuda" }); return "no error"; }
    catch (e) { return e.message; }
  });
  assert.match(message, /"backend" must be "scalar", "eigen", "simd" or "webgl"/);
  await context.close();
});

test("a lost WebGL context: the app keeps drawing and computing on the CPU, then the GPU path returns", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const small = { Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1], [2]], causal: true };
  const computeWith = (backend) => page.evaluate(({ request, backend }) => {
    try { return { result: window.attentionExplainer.compute({ ...request, backend }) }; }
    catch (e) { return { error: e.message }; }
  }, { request: small, backend });
  const colours = async (name) => (await distinctColours(page, (await screenshot(page, name)).png)).colours;

  assert.equal((await computeWith("webgl")).result.backend, "webgl");
  await page.evaluate(() => window.attentionExplainer.setState({ view: "weights" }));
  await frames(page, 5);
  const before = await colours("gpu-before-context-loss");

  await page.evaluate(() => {
    window.__loseContext = document.getElementById("canvas").getContext("webgl2").getExtension("WEBGL_lose_context");
    window.__loseContext.loseContext();
  });
  await frames(page, 5);
  const lost = await computeWith("webgl");
  assert.match(lost.error ?? "", /unavailable.*lost/, "while lost, webgl says why");
  assert.equal((await computeWith("scalar")).result.weights[0][1], 0, "the CPU still computes");
  const state = await page.evaluate(() => window.attentionExplainer.setState({ causal: true }));
  assert.equal(state.causal, true, "the app still takes input");

  await page.evaluate(() => window.__loseContext.restoreContext());
  let restored = null;
  for (let attempt = 0; attempt < 100 && !restored; attempt++) {
    await frames(page, 2);
    const r = await computeWith("webgl");
    if (r.result) restored = r.result;
  }
  assert.ok(restored, "webgl computes again after the context is restored");
  assert.equal(restored.weights[0][1], 0);
  assert.ok(Math.abs(restored.output[1][0] - 1.6697615) < 1e-4, `output ${restored.output[1][0]}`);
  await page.evaluate(() => window.attentionExplainer.setState({ view: "flow" }));
  await page.evaluate(() => window.attentionExplainer.setState({ view: "weights", causal: false }));
  await frames(page, 5);
  const after = await colours("gpu-after-context-restore");
  assert.ok(after > 50, `the canvas draws again (${after} colours, ${before} before the loss)`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("without float render targets the webgl backend says why and the app stays on the CPU", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // a WebGL2 that offers no EXT_color_buffer_float, as some mobile GPUs do
  await context.addInitScript(() => {
    const proto = WebGL2RenderingContext.prototype;
    const getExtension = proto.getExtension, getSupportedExtensions = proto.getSupportedExtensions;
    proto.getExtension = function (name) { return name === "EXT_color_buffer_float" ? null : getExtension.call(this, name); };
    proto.getSupportedExtensions = function () {
      return (getSupportedExtensions.call(this) || []).filter((name) => name !== "EXT_color_buffer_float");
    };
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  const small = { Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1], [2]] };
  const message = await page.evaluate((request) => {
    try { window.attentionExplainer.compute({ ...request, backend: "webgl" }); return "no error"; }
    catch (e) { return e.message; }
  }, small);
  assert.match(message, /unavailable.*EXT_color_buffer_float/);
  const cpu = await page.evaluate((request) => window.attentionExplainer.compute({ ...request, backend: "simd" }), small);
  assert.ok(Math.abs(cpu.output[0][0] - 1.3302385) < 1e-5, `output ${cpu.output[0][0]}`);
  // the app says so, and what was asked of the GPU runs on the SIMD kernel
  const state = await page.evaluate(() => window.attentionExplainer.setState({ view: "cost", backend: "webgl", cost_T: 256 }));
  assert.equal(state.gpu.available, false);
  assert.match(state.gpu.unavailable_reason, /EXT_color_buffer_float/);
  assert.equal(state.backend_live.name, "simd");
  assert.match(state.backend_live.reason, /unavailable/);
  assert.equal(state.view_data.matrix.backend, "simd");
  await page.evaluate(() => window.attentionExplainer.setState({ view: "weights" }));
  await frames(page, 5);
  const { colours } = await distinctColours(page, (await screenshot(page, "gpu-unavailable")).png);
  assert.ok(colours > 50, `the app draws (${colours} colours)`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the app's large matrix: auto stays on the CPU with a software GPU and says why; webgl by hand computes it", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const api = (expr) => page.evaluate(expr);
  let state = await api(() => window.attentionExplainer.setState({ view: "cost", cost_T: 256, causal: true }));
  assert.equal(state.backend, "auto");
  assert.equal(state.gpu.available, true);
  assert.equal(state.gpu.software, true, `SwiftShader is a software GPU (renderer "${state.gpu.renderer}")`);
  assert.equal(state.backend_live.name, "simd");
  assert.match(state.backend_live.reason, /software/);
  const cpu = state.view_data.matrix;
  assert.equal(cpu.T, 256);
  assert.equal(cpu.backend, "simd");
  assert.ok(cpu.max_row_sum_error < 1e-4, `rows sum to 1 (${cpu.max_row_sum_error})`);
  assert.equal(cpu.max_weight, 1, "the first query sees only itself under the causal mask");

  state = await api(() => window.attentionExplainer.setState({ backend: "webgl" }));
  assert.equal(state.backend_live.name, "webgl");
  const gpu = state.view_data.matrix;
  assert.equal(gpu.backend, "webgl");
  assert.ok(gpu.max_row_sum_error < 1e-4, `GPU rows sum to 1 (${gpu.max_row_sum_error})`);
  assert.ok(Math.abs(gpu.colour_top - cpu.colour_top) < 1e-4 * cpu.colour_top + 1e-6,
    `the GPU's matrix is the CPU's (typical row maximum ${gpu.colour_top} vs ${cpu.colour_top})`);

  await assert.rejects(api(() => window.attentionExplainer.setState({ backend: "cuda" })), /backend/);
  // the 2048 x 2048 matrix is one GPU image: frames stay cheap once it is computed
  await api(() => window.attentionExplainer.setState({ backend: "auto", cost_T: 2048 }));
  // (the view's own timing runs first, a few ms of kernel per frame by design)
  await page.waitForFunction(() => window.attentionExplainer.getState().view_data.done, null, { timeout: 120000, polling: 500 });
  await frames(page, 10);
  const frameMs = await api(() => {
    const times = [];
    for (let i = 0; i < 20; ++i) { const t0 = performance.now(); window.Module._attn_run_frame(); times.push(performance.now() - t0); }
    times.sort((a, b) => a - b);
    return times[10];
  });
  console.log(`cost view with a 2048 x 2048 weight matrix on screen: median frame ${frameMs.toFixed(2)} ms (CPU side)`);
  const shot = await screenshot(page, "cost-2048");
  assert.ok((await distinctColours(page, shot.png)).colours > 50);
  assert.deepEqual(errors, []);
  await context.close();
});
