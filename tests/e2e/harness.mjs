// Shared set-up for the browser tests: a static server over dist/ on a free loopback port and
// headless Debian Chromium (SwiftShader WebGL2) driven by playwright-core. Not a test itself.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DIST = path.join(ROOT, "dist");
export const OUT = path.join(ROOT, "tests/e2e/out");  // screenshots (ignored by git)

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json", ".png": "image/png" };

/** Serves `dir` on 127.0.0.1:<free port>; resolves { url, close }. `headHtml` goes right after
 *  <head> in every HTML page (a probe script for drivers that cannot hear the console); `cache` lets the
 *  browser keep every file but the pages (Cache-Control), as a real server would. */
export function serveStatic(dir = DIST, { headHtml = "", cache = false } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    let file = path.normalize(path.join(dir, decodeURIComponent(url.pathname)));
    if (!file.startsWith(dir)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404).end("not found"); return; }
      const headers = { "Content-Type": TYPES[path.extname(file)] || "application/octet-stream" };
      // cache: the browser may keep what is not a page (the wasm compiled once for many page loads)
      if (cache && path.extname(file) !== ".html") headers["Cache-Control"] = "max-age=3600";
      res.writeHead(200, headers);
      res.end(headHtml && path.extname(file) === ".html" ? String(data).replace("<head>", "<head>" + headHtml) : data);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) });
  }));
}

/** A stand-in for the Hugging Face hub (the real one is out of reach here): GET/HEAD
 *  /{owner}/{name}/resolve/{revision}/{file} from `repos` ({ "owner/name": folder }) with CORS, Content-Length and
 *  one-byte-range answers (the page's size probes); 404 for a file the folder lacks; GET /raw/{path} for a test's own
 *  reads of a folder. Options: `gated` (a Set of repositories that answer 401 without `Authorization: Bearer token`,
 *  403 with another), `claimed` ({ repo: { file: bytes } }: a HEAD says that size, as a huge repository's would),
 *  `slow` (a repository whose model.safetensors trickles out over ~3 s). Resolves { base, requests, close }; each
 *  request is recorded as { method, url, repo, file, auth, status }. */
export function serveHub(repos, { gated = new Set(), token = "", claimed = {}, slow = "" } = {}) {
  const requests = [];
  const srv = http.createServer((req, res) => {
    const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "Authorization, Range",
      "Access-Control-Expose-Headers": "Content-Length, Content-Range, X-Linked-Size" };
    if (req.method === "OPTIONS") { res.writeHead(204, cors).end(); return; }
    const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const raw = /^\/raw\/(.+)$/.exec(pathname);
    if (raw) { res.writeHead(200, cors).end(fs.readFileSync(raw[1])); return; }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/([^/]+)$/.exec(pathname);
    const asked = { method: req.method, url: req.url, repo: m && m[1], file: m && m[3], auth: req.headers.authorization || null, status: 0 };
    requests.push(asked);
    const answer = (status, headers, body) => { asked.status = status; res.writeHead(status, { ...cors, ...headers }); res.end(body); };
    if (m && gated.has(m[1]) && req.headers.authorization !== `Bearer ${token}`) {
      answer(req.headers.authorization ? 403 : 401, {}, "gated");
      return;
    }
    const size = m && claimed[m[1]] && claimed[m[1]][m[3]];
    if (size && req.method === "HEAD") { answer(200, { "X-Linked-Size": size, "Content-Length": 0 }); return; }
    const file = m && repos[m[1]] && path.join(repos[m[1]], m[3]);
    if (!file || !fs.existsSync(file)) { answer(404, {}, "not found"); return; }
    const data = fs.readFileSync(file);
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || "");
    if (range) {
      const a = Number(range[1]), b = Math.min(Number(range[2]), data.length - 1);
      answer(206, { "Content-Length": b - a + 1, "Content-Range": `bytes ${a}-${b}/${data.length}` }, data.subarray(a, b + 1));
      return;
    }
    const headers = { "Content-Length": data.length, "Content-Type": "application/octet-stream" };
    if (req.method === "HEAD") { answer(200, headers); return; }
    if (m[1] !== slow || m[3] !== "model.safetensors") { answer(200, headers, data); return; }
    asked.status = 200;
    res.writeHead(200, { ...cors, ...headers });
    const piece = Math.ceil(data.length / 60);
    let offset = 0;
    const timer = setInterval(() => {
      if (res.destroyed || offset >= data.length) { clearInterval(timer); res.end(); return; }
      res.write(data.subarray(offset, offset + piece));
      offset += piece;
    }, 50);
    res.on("close", () => clearInterval(timer));
  });
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve({
    base: `http://127.0.0.1:${srv.address().port}`, requests,
    close: () => { srv.closeAllConnections(); return new Promise((r) => srv.close(r)); },
  })));
}

/** Headless Chromium as root on this machine: the flags TOOLCHAIN.md lists, WebGL2 via SwiftShader.
 *  (playwright gives every launch a fresh temporary profile: the --user-data-dir of TOOLCHAIN.md.) */
export async function launchBrowser(extraArgs = []) {
  const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--enable-unsafe-swiftshader", "--use-gl=angle", "--use-angle=swiftshader", ...extraArgs];
  return chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args });
}

/** Opens the page, records console errors, waits for attentionExplainer.ready. */
// route: [pattern, handler] for context.route (e.g. a file of the site answered 404).
export async function openExplainer(browser, url, { width = 1280, height = 800, dpr = 1, waitReady = true, route = null } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr });
  if (route) await context.route(...route);
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  if (waitReady) await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  return { page, context, errors };
}

/** Waits a few animation frames so the canvas shows the latest state. */
// The app's views (the table's choices for "view"), so a test covers the views added after it.
export function appViews(page) {
  return page.evaluate(() => window.attentionExplainer.inputs.find((f) => f.name === "view").choices);
}

export async function frames(page, n = 3) {
  await page.evaluate((count) => new Promise((resolve) => {
    let left = count;
    const step = () => (--left <= 0 ? resolve() : requestAnimationFrame(step));
    requestAnimationFrame(step);
  }), n);
}

/** Screenshot into tests/e2e/out/NAME.png; returns the path and whether it has more than one colour. */
export async function screenshot(page, name) {
  fs.mkdirSync(OUT, { recursive: true });
  const file = path.join(OUT, `${name}.png`);
  const png = await page.screenshot({ path: file });
  return { file, png };
}

/** Distinct colours (sampled) of a PNG, decoded by the browser itself (no PNG library needed).
 *  WebGL canvases cannot be read back after presenting, so the screenshot is what we measure. */
export async function distinctColours(page, png) {
  return page.evaluate(async (b64) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const probe = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = probe.getContext("2d");
    ctx.drawImage(bitmap, 0, 0);
    const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * 7) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return { colours: seen.size, width: bitmap.width, height: bitmap.height };
  }, png.toString("base64"));
}

/** The control's rect once it is on screen: the view is scrolled with the mouse wheel, as a hand would. */
export async function shown(page, name) {
  const height = page.viewportSize().height;
  for (let tries = 0; tries < 12; tries++) {
    const r = await page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
    if (r.y >= 40 && r.y + r.h <= height - 4) return r;
    await page.mouse.move(page.viewportSize().width * 0.6, height / 2);
    await page.mouse.wheel(0, r.y < 40 ? -300 : 300);
    await frames(page, 4);
  }
  throw new Error(`${name} could not be scrolled into view: ${JSON.stringify(await page.evaluate((n) => window.attentionExplainer.itemRect(n), name))}`);
}

/** A real mouse click in the middle of `rect` ({x, y, w, h}, CSS pixels), the way a hand does it:
 *  move there, let the app see the hover, press, release. Dear ImGui reads the mouse once a frame. */
export async function clickRect(page, rect, { atX } = {}) {
  const x = atX !== undefined ? rect.x + atX : rect.x + rect.w / 2, y = rect.y + rect.h / 2;
  await page.mouse.move(x, y);
  await frames(page, 2);
  await page.mouse.down();
  await frames(page, 2);
  await page.mouse.up();
  await frames(page, 3);
}

/** Presses a key (e.g. "Backspace", "Control+A") and holds it for two frames: Dear ImGui 1.86 reads
 *  the keys' up/down state once a frame, so a press and release inside one frame would be missed. */
export async function holdKey(page, combo) {
  const keys = combo.split("+");
  for (const key of keys) await page.keyboard.down(key);
  await frames(page, 2);
  for (const key of [...keys].reverse()) await page.keyboard.up(key);
  await frames(page, 2);
}

/** Runs in the page (pass it to evaluate): compute() once with "scalar", once with the case's `backend`
 *  ("webgl" unless given) on seeded random inputs; returns the relative errors and how many hidden
 *  (masked) keys got a non-zero weight. Self-contained: other engines get it as source text. */
export function compareInPage(cases) {
  function randomMatrix(seed, rows, cols) {  // mulberry32: the same numbers on every run
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = Math.imul(s ^ (s >>> 15), 1 | s);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    // three decimals keep the request small: compute() copies its JSON text through the wasm stack
    return Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.round(next() * 4000 - 2000) / 1000));
  }
  function relativeError(got, want) {
    let diff = 0, largest = 0;
    want.forEach((row, i) => row.forEach((w, j) => {
      const g = got[i][j];
      diff = Math.max(diff, Number.isFinite(g) ? Math.abs(g - w) : Infinity);
      largest = Math.max(largest, Math.abs(w));
    }));
    return largest > 0 ? diff / largest : diff;
  }
  return cases.map(({ Tq, Tk, d, dv, causal, temperature = 1, magnitude = 2, backend = "webgl" }, index) => {
    const sized = (m) => m.map((row) => row.map((v) => v * magnitude / 2));  // entries in [-magnitude, magnitude]
    const request = { Q: sized(randomMatrix(index * 4 + 1, Tq, d)), K: sized(randomMatrix(index * 4 + 2, Tk, d)),
      V: sized(randomMatrix(index * 4 + 3, Tk, dv)), causal, temperature };
    const scalar = window.attentionExplainer.compute({ ...request, backend: "scalar" });
    const gpu = window.attentionExplainer.compute({ ...request, backend });
    let maskedNonzero = 0;
    if (causal) gpu.weights.forEach((row, i) => row.forEach((w, j) => { if (j > i && w !== 0) maskedNonzero++; }));
    return { shape: `(Tq ${Tq}, Tk ${Tk}, d ${d}, dv ${dv})${causal ? " causal" : ""} temperature ${temperature} |entries| <= ${magnitude}`, backend: gpu.backend,
      weightsError: relativeError(gpu.weights, scalar.weights), outputError: relativeError(gpu.output, scalar.output),
      maskedNonzero, rows: gpu.weights.length, cols: gpu.weights[0].length };
  });
}

// Keyboard only (the a11y and design tests): Tab reaches the canvas, then arrows move Dear ImGui's nav cursor (read back through
// itemRect("keyboard-focus")) to a control, and Space presses it; an area that scrolls on its own
// (the view's body) is one stop for the arrows, entered with Space. No mouse event is ever sent.
export async function focusRect(page) {
  return page.evaluate(() => { try { return window.attentionExplainer.itemRect("keyboard-focus"); } catch (e) { return null; } });
}
const centre = (r) => [r.x + r.w / 2, r.y + r.h / 2];
const inside = (r, [x, y]) => x >= r.x - 1 && x <= r.x + r.w + 1 && y >= r.y - 1 && y <= r.y + r.h + 1;

export async function walkTo(page, name) {
  const target = await page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
  const path = [];
  for (let step = 0; step < 80; ++step) {
    const at = await focusRect(page);
    assert.ok(at, `the keyboard cursor shows (walking to ${name})`);
    if (inside(target, centre(at))) return path.length;
    if (inside(at, centre(target)) && at.w * at.h > 4 * target.w * target.h) {
      // the cursor is on an area that holds the target (the view's scrolling body): Space enters it
      await holdKey(page, "Space");
      path.push("Space");
      continue;
    }
    const [ax, ay] = centre(at), [tx, ty] = centre(target);
    const vertical = ty < at.y || ty > at.y + at.h;  // not on the cursor's line yet
    const key = vertical ? (ty < ay ? "ArrowUp" : "ArrowDown") : (tx < ax ? "ArrowLeft" : "ArrowRight");
    await holdKey(page, key);
    path.push(key);
    const moved = await focusRect(page);
    if (moved && moved.x === at.x && moved.y === at.y) {  // blocked on that axis: try the other one
      const other = vertical ? (tx < ax ? "ArrowLeft" : "ArrowRight") : (ty < ay ? "ArrowUp" : "ArrowDown");
      await holdKey(page, other);
      path.push(other);
      const again = await focusRect(page);
      assert.ok(!(again && again.x === at.x && again.y === at.y),
        `the arrows cannot leave (${at.x}, ${at.y}) towards ${name} at (${target.x}, ${target.y}); keys ${path.join(" ")}`);
    }
  }
  assert.fail(`${name} not reached with 80 arrow presses: ${path.join(" ")}`);
}
