// End-to-end in the other two engine families: Firefox (Debian's firefox-esr, puppeteer-core over
// WebDriver BiDi) and WebKitGTK, Safari's family (WebKitWebDriver + MiniBrowser, selenium-webdriver),
// both on an Xvfb display this file starts (headless Firefox has no WebGL2 here). The same checks as
// in Chromium: no console error, ready, "it" → "animal", compute() and webgl against the scalar
// reference, a real click, and a screenshot of every view that is not blank and shows that view
// (it is nearer to Chromium's picture of the same view than to any other view's).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { Builder, Origin } from "selenium-webdriver";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, compareInPage, appViews, OUT } from "./harness.mjs";

let VIEWS;  // the app's views, read from Chromium in before()
const WIDTH = 1200, HEIGHT = 760;  // CSS pixels of the page, the same in every engine
const QUERY = "?theme=dark&reduced_motion=1";
const FIREFOX = "/usr/bin/firefox-esr";
const WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver";
const MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

// WebKitWebDriver hears no console: every page gets this probe first, in both engines alike.
const PROBE = `<script>window.__errors = [];
  addEventListener("error", (e) => __errors.push(String(e.message || e)));
  addEventListener("unhandledrejection", (e) => __errors.push("unhandled rejection: " + String(e.reason)));
  const consoleError = console.error.bind(console);
  console.error = (...a) => { __errors.push(a.map(String).join(" ")); consoleError(...a); };</script>`;

/** Xvfb on a display it picks itself (-displayfd); resolves { display, stop }. */
function startXvfb() {
  const xvfb = spawn("Xvfb", ["-displayfd", "1", "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
    { stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve, reject) => {
    let text = "";
    xvfb.on("error", reject);
    xvfb.on("exit", (code) => reject(new Error(`Xvfb exited (${code}) before giving a display`)));
    xvfb.stdout.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) resolve({ display: ":" + text.trim(), stop: () => xvfb.kill() });
    });
  });
}

function freePort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Each engine behind one small interface: run(fn, arg) evaluates fn(arg) in the page (awaiting a
// Promise) and returns its JSON value; mouse(x, y, "move" | "down" | "up"); screenshot() a PNG Buffer.
async function firefox(display) {
  const browser = await puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: false,
    env: { ...process.env, DISPLAY: display } });
  const page = await browser.newPage();
  await page.setViewport({ width: WIDTH, height: HEIGHT });
  return {
    open: (url) => page.goto(url),
    run: (fn, arg) => page.evaluate(`(async () => JSON.stringify(await (${fn})(${JSON.stringify(arg)})))()`).then(JSON.parse),
    async mouse(x, y, action) {
      if (action === "move") await page.mouse.move(x, y);
      else if (action === "down") await page.mouse.down();
      else await page.mouse.up();
    },
    screenshot: async () => Buffer.from(await page.screenshot({ encoding: "base64" }), "base64"),
    close: () => browser.close(),
  };
}

async function webkit(display) {
  const port = await freePort();
  const server = spawn(WEBKIT_DRIVER, [`--port=${port}`], { env: { ...process.env, DISPLAY: display }, stdio: "ignore" });
  let driver;
  for (let tries = 0; !driver; ++tries) {  // the driver listens a moment after it starts
    try {
      driver = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities({
        browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] } }).build();
    } catch (e) {
      if (tries > 50) { server.kill(); throw e; }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // A script may wait for the page as long as Firefox's does (WebDriver's default is 30 s; a loaded CI machine
  // has needed more for WebKit's first compile of the wasm).
  await driver.manage().setTimeouts({ script: 180000 });
  // The window's size includes its toolbar: grow it until the page itself is WIDTH x HEIGHT.
  await driver.manage().window().setRect({ width: WIDTH, height: HEIGHT });
  const inner = await driver.executeScript("return [innerWidth, innerHeight]");
  await driver.manage().window().setRect({ width: 2 * WIDTH - inner[0], height: 2 * HEIGHT - inner[1] });
  const position = { x: 0, y: 0 };
  return {
    open: (url) => driver.get(url),
    async run(fn, arg) {
      const reply = await driver.executeAsyncScript(`const done = arguments[arguments.length - 1];
        Promise.resolve().then(() => (${fn})(${JSON.stringify(arg)}))
          .then((v) => done({ json: JSON.stringify(v) }), (e) => done({ error: String((e && e.message) || e) }));`);
      if (reply.error !== undefined) throw new Error(reply.error);
      return reply.json === undefined ? undefined : JSON.parse(reply.json);
    },
    async mouse(x, y, action) {
      const actions = driver.actions({ async: true });
      if (action === "move") {
        Object.assign(position, { x: Math.round(x), y: Math.round(y) });
        await actions.move({ ...position, origin: Origin.VIEWPORT }).perform();
      } else if (action === "down") await actions.press().perform();
      else await actions.release().perform();
    },
    screenshot: async () => Buffer.from(await driver.takeScreenshot(), "base64"),
    async close() { try { await driver.quit(); } finally { server.kill(); } },
  };
}

// In the page: waits n animation frames.
const waitFrames = (n) => new Promise((resolve) => {
  let left = n;
  const step = () => (--left <= 0 ? resolve(true) : requestAnimationFrame(step));
  requestAnimationFrame(step);
});

// Chromium (headless, SwiftShader) is the reference picture of each view, and decodes every PNG:
// a 48 x 30 grey thumbnail per screenshot, compared by mean absolute difference.
let server, chromium, decoder, reference, chromiumLosses;
// The train view's first TRAIN_STEPS steps in a page (run(fn, arg) runs fn in it): where they
// trained and every step's loss. wasm's floats are IEEE's in every engine: the same bits.
const TRAIN_STEPS = 60;
function trainLosses(run) {
  return run(async (steps) => {
    const api = window.attentionExplainer;
    api.setState({ view: "train", train: { steps } });
    const wait = () => new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 200 && api.getState().train.worker !== "ready" && !api.getState().train.worker.startsWith("failed"); ++i) await wait();
    api.train("start");
    for (let i = 0; i < 1200 && api.getState().train.running; ++i) await wait();
    const t = api.getState().train;
    return { worker: t.worker, in_worker: t.in_worker, steps: t.steps_done, loss: api.trainCurves().run.loss };
  }, TRAIN_STEPS);
}
async function thumbnail(png, page = decoder) {
  return page.evaluate(async (b64) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const small = new OffscreenCanvas(48, 30);
    const ctx = small.getContext("2d");
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(bitmap, 0, 0, 48, 30);
    const data = ctx.getImageData(0, 0, 48, 30).data;
    const grey = [];
    for (let i = 0; i < data.length; i += 4) grey.push((data[i] + data[i + 1] + data[i + 2]) / 3);
    return grey;
  }, png.toString("base64"));
}
const difference = (a, b) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;

// The quick tier (./build_wasm.sh test) keeps a smoke in each engine: the page loads and compute() agrees;
// test all (ATTN_FULL=1) adds the GPU, a real click, the train worker and every view against Chromium's.
const FULL = process.env.ATTN_FULL === "1";
const FULL_ONLY = { skip: !FULL && "test all runs it" };

before(async () => {
  const started = Date.now();
  server = await serveStatic(undefined, { headHtml: PROBE });
  chromium = await launchBrowser();
  const { page, context } = await openExplainer(chromium, server.url + QUERY, { width: WIDTH, height: HEIGHT });
  reference = {};
  VIEWS = await appViews(page);
  if (FULL) {  // what the full-only tests compare with
    for (const view of VIEWS) {
      await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
      await frames(page, 5);
      reference[view] = await thumbnail((await screenshot(page, `engines-chromium-${view}`)).png, page);
    }
    chromiumLosses = await trainLosses((f, a) => page.evaluate(f, a));
  }
  await context.close();  // the app would keep drawing beside the other engines: a blank page decodes
  decoder = await (await chromium.newContext()).newPage();
  console.log(`Chromium's reference pictures of ${VIEWS.length} views in ${Date.now() - started} ms`);
});
after(async () => { await chromium?.close(); await server?.close(); });

for (const [name, start] of [["firefox", firefox], ["webkit", webkit]]) {
  describe(`${name}: the explainer in ${name === "firefox" ? "Firefox (Gecko)" : "WebKitGTK (Safari's engine family)"}`, () => {
    let xvfb, engine;
    const errors = () => engine.run(() => window.__errors);
    const clickAt = async (x, y) => {
      await engine.mouse(x, y, "move");
      await engine.run(waitFrames, 2);
      await engine.mouse(x, y, "down");
      await engine.run(waitFrames, 2);
      await engine.mouse(x, y, "up");
      await engine.run(waitFrames, 3);
    };
    before(async () => {
      const started = Date.now();
      xvfb = await startXvfb();
      engine = await start(xvfb.display);
      console.log(`${name}: Xvfb and the browser started in ${Date.now() - started} ms`);
    });
    after(async () => {
      const started = Date.now();
      await engine?.close();
      xvfb?.stop();
      console.log(`${name}: closed in ${Date.now() - started} ms`);
    });

    test("loads with no console error, ready resolves, 'it' attends most to 'animal'", async () => {
      const started = Date.now();
      await engine.open(server.url + QUERY);
      const ready = await engine.run(() => window.attentionExplainer.ready.then(() => performance.now()));
      console.log(`${name}: ready ${ready.toFixed(0)} ms after navigation (${Date.now() - started} ms with the driver)`);
      const s = await engine.run(() => {
        const s = window.attentionExplainer.getState();
        return { tokens: s.tokens, token_text: s.token_text, row: s.weights[s.token], size: [innerWidth, innerHeight] };
      });
      assert.deepEqual(s.size, [WIDTH, HEIGHT]);
      assert.equal(s.token_text, "it");
      const best = s.row.indexOf(Math.max(...s.row));
      assert.equal(s.tokens[best], "animal");
      assert.ok(s.row[best] > 0.5, `weight on animal ${s.row[best]}`);
      await engine.run(waitFrames, 3);
      assert.deepEqual(await errors(), []);
    });

    test("compute(): the lesson's numbers; eigen, simd and webgl agree with the scalar reference", async () => {
      const derive = await engine.run(() => window.attentionExplainer.compute(
        { Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]], V: [[1, 2], [3, 4], [5, 6]] }));
      const expectW = [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]];
      derive.weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - expectW[i][j]) < 0.006, `w${i}${j}=${w}`)));
      const cases = [];
      for (const backend of ["eigen", "simd", "webgl"])
        for (const [Tq, Tk, d, dv, causal] of [[1, 1, 1, 1, false], [3, 3, 17, 5, true], [17, 65, 3, 64, false], [65, 65, 64, 17, true]])
          cases.push({ Tq, Tk, d, dv, causal, backend });
      const rows = await engine.run(compareInPage, cases);
      for (const [i, r] of rows.entries()) {
        assert.equal(r.backend, cases[i].backend);
        assert.ok(r.weightsError <= 1e-4 && r.outputError <= 1e-4, `${r.backend} ${r.shape}: weights ${r.weightsError}, output ${r.outputError}`);
        assert.equal(r.maskedNonzero, 0, `${r.backend} ${r.shape}: masked keys got weight`);
      }
      console.log(`${name}: largest relative error against scalar: ` + ["eigen", "simd", "webgl"].map((b) =>
        `${b} ${Math.max(...rows.filter((r) => r.backend === b).map((r) => Math.max(r.weightsError, r.outputError))).toExponential(1)}`).join(", "));
    });

    test("auto trusts a measured GPU, not its name", FULL_ONLY, async () => {
      const s = await engine.run(() => {
        const s = window.attentionExplainer.setState({ cost_T: 2048 });
        return { gpu: s.gpu, live: s.backend_live };
      });
      console.log(`${name}: renderer "${s.gpu.renderer}", speed check ${JSON.stringify(s.gpu.speed_check)}, live ${s.live.name}: ${s.live.reason}`);
      assert.equal(s.gpu.available, true);
      if (!s.gpu.software) {  // a name that does not say "software" was measured
        assert.ok(s.gpu.speed_check, "a GPU not named as software is timed once");
        assert.equal(s.live.name, s.gpu.speed_check.gpu_ms < s.gpu.speed_check.cpu_ms ? "webgl" : "simd");
        assert.match(s.live.reason, /measured at T = 512/);
      }
      // Xvfb has no GPU: whatever the name says, Mesa rasterises in software and the CPU must win.
      assert.equal(s.live.name, "simd", s.live.reason);
    });

    test("a real click on the causal checkbox changes the weights", FULL_ONLY, async () => {
      const box = await engine.run(() => {
        window.attentionExplainer.setState({ causal: false, view: "flow" });
        return window.attentionExplainer.itemRect("causal");
      });
      await engine.run(waitFrames, 3);
      await clickAt(box.x + box.h / 2, box.y + box.h / 2);
      await engine.mouse(WIDTH - 2, HEIGHT - 2, "move");  // away: no tooltip in the screenshots
      const after = await engine.run(() => {
        const s = window.attentionExplainer.getState();
        return { causal: s.causal, w01: s.weights[0][1] };
      });
      assert.deepEqual(after, { causal: true, w01: 0 });
    });

    test("the train view trains in a Web Worker, every step's loss bit for bit Chromium's", FULL_ONLY, async () => {
      const r = await trainLosses((f, a) => engine.run(f, a));
      assert.equal(chromiumLosses.worker, "ready");
      assert.equal(r.worker, "ready", `${name}'s worker: ${r.worker}`);
      assert.ok(r.in_worker);
      assert.equal(r.steps, TRAIN_STEPS);
      assert.deepEqual(r.loss, chromiumLosses.loss);
      await engine.run(() => window.attentionExplainer.train("reset"));
      assert.deepEqual(await errors(), []);
    });

    test("every view: a screenshot that is not blank and shows that view", FULL_ONLY, async () => {
      const shots = {};
      for (const view of VIEWS) {
        const shown = await engine.run(async (v) => (await window.attentionExplainer.setState({ view: v, causal: false })).view, view);
        assert.equal(shown, view);
        await engine.run(waitFrames, 5);
        const png = await engine.screenshot();
        fs.mkdirSync(OUT, { recursive: true });
        fs.writeFileSync(path.join(OUT, `engines-${name}-${view}.png`), png);
        const { colours, width, height } = await distinctColours(decoder, png);
        assert.deepEqual([width, height], [WIDTH, HEIGHT], `${view}: the screenshot is the page`);
        assert.ok(colours > 30, `${view}: screenshot has only ${colours} colours`);
        shots[view] = await thumbnail(png);
      }
      // Each screenshot is nearest to Chromium's picture of the same view.
      const report = [];
      for (const view of VIEWS) {
        const ranked = VIEWS.map((v) => [difference(shots[view], reference[v]), v]).sort((a, b) => a[0] - b[0]);
        report.push(`${view} ${ranked[0][0].toFixed(1)} (next ${ranked[1][1]} ${ranked[1][0].toFixed(1)})`);
        assert.equal(ranked[0][1], view, `${name}'s ${view} looks most like Chromium's ${ranked[0][1]}: ${report.at(-1)}`);
      }
      console.log(`${name}: grey difference to Chromium's same view (0-255): ${report.join(", ")}`);
      assert.deepEqual(await errors(), []);
    });
  });
}
