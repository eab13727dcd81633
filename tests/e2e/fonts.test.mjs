// Text in any script: the first load fetches the UI font only (under 1 MB gzip in all); a sentence
// in other scripts makes the page fetch the fallback fonts of those scripts (dist/fonts/), their
// glyphs reach the atlas, and what no font has (an emoji) is drawn as a "U+XXXX" box. A pixel
// check: a CJK chip drawn with its glyph is narrow and differs from another character's, where a
// missing font would draw the wide U+ box. Screenshots: tests/e2e/out/fonts-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { serveStatic, launchBrowser, frames, screenshot, DIST } from "./harness.mjs";

const SENTENCE = "The cat 猫 は 고양이 кошка बिल्ली แมว 😀 sat";
const NEEDED = ["latin-cyrillic-greek", "cjk", "hangul", "devanagari", "thai"];

let server, browser;
before(async () => {
  server = await serveStatic();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open({ width = 1280, height = 800, dpr = 1, mobile = false, blockFonts = false } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, isMobile: mobile, hasTouch: mobile });
  if (blockFonts) await context.route("**/fonts/**", (route) => route.fulfill({ status: 404, body: "not found" }));
  const page = await context.newPage();
  const requests = [], errors = [];
  page.on("request", (r) => requests.push(new URL(r.url()).pathname));
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await frames(page, 5);
  return { context, page, requests, errors };
}
const fontsState = (page) => page.evaluate(() => window.attentionExplainer.getState().fonts);
const rect = (page, name) => page.evaluate((n) => window.attentionExplainer.itemRect(n), name);

async function setSentence(page, sentence) {
  const reply = await page.evaluate((s) => window.attentionExplainer.setState({ sentence: s }), sentence);
  assert.ok(!reply || !reply.error, JSON.stringify(reply));
  // until nothing is in flight (each arrival is taken before the next frame)
  for (let i = 0; i < 200; ++i) {
    await frames(page, 2);
    const f = await fontsState(page);
    if (f.requested.length === 0) return f;
  }
  assert.fail("the fallback fonts never arrived: " + JSON.stringify(await fontsState(page)));
}

test("the first load fetches no fallback font; a multi-script sentence fetches its scripts' fonts", async () => {
  const { context, page, requests, errors } = await open();
  const fallbackRequests = () => requests.filter((p) => p.startsWith("/fonts/"));
  assert.deepEqual(fallbackRequests(), [], "no fallback font in the first load");
  // the first load's size, gzip, of what it fetched (the site's files, as a static host gzips them)
  const firstLoad = [...new Set(requests)].map((p) => path.join(DIST, p === "/" ? "index.html" : p)).filter((f) => fs.existsSync(f));
  const gzipBytes = firstLoad.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(f), { level: 9 }).length, 0);
  console.log(`first load: ${firstLoad.length} files, ${(gzipBytes / 1024).toFixed(0)} KiB gzip`);
  assert.ok(gzipBytes < 1000 * 1024, `first load ${gzipBytes} bytes gzip`);
  const before = await fontsState(page);
  assert.deepEqual(before.loaded, []);
  assert.equal(before.wanted, 0);

  const started = Date.now();
  const f = await setSentence(page, SENTENCE);
  console.log(`fonts after ${Date.now() - started} ms: ${JSON.stringify(f)}`);
  for (const group of NEEDED) assert.ok(f.loaded.includes(group), `${group} loaded: ${JSON.stringify(f.loaded)}`);
  assert.deepEqual(f.failed, []);
  // only the needed ones were fetched, each once
  const fetched = fallbackRequests().map((p) => p.replace("/fonts/", "").replace(/\.(ttf|otf)$/, "")).sort();
  assert.deepEqual(fetched, [...f.loaded].sort());
  // every shown code point the UI font lacks is in the atlas but the emoji, drawn as its U+ box
  assert.deepEqual(f.placeholder_code_points, ["U+1F600"]);
  assert.equal(f.in_atlas, f.wanted - 1);
  // 猫 は, 고양이 (3), кошка (к о ш а), बिल्ली (ब ि ल ् ी), แมว (3), 😀: 18 distinct code points
  assert.equal(f.wanted, 18);
  await page.evaluate(() => window.attentionExplainer.setState({ theme: "dark" }));
  await frames(page, 4);
  await screenshot(page, "fonts-desktop-dark");
  await page.evaluate(() => window.attentionExplainer.setState({ theme: "light" }));
  await frames(page, 4);
  await screenshot(page, "fonts-desktop-light");
  assert.deepEqual(errors, []);
  await context.close();
});

test("a CJK chip is drawn with its glyph, not a box (pixel check against blocked fonts)", async () => {
  // ink of the chip's middle: the columns holding any pixel far from the chip's background
  async function chip(page, sentence) {
    await setSentence(page, sentence);
    await frames(page, 3);
    const r = await rect(page, "chip:0");
    const png = await page.screenshot({ clip: { x: r.x, y: r.y, width: r.w, height: r.h } });
    const ink = await page.evaluate(async (b64) => {
      const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
      const c = new OffscreenCanvas(bitmap.width, bitmap.height).getContext("2d");
      c.drawImage(bitmap, 0, 0);
      const { data, width, height } = c.getImageData(0, 0, bitmap.width, bitmap.height);
      const bg = [data[(Math.floor(height / 2) * width + 2) * 4], data[(Math.floor(height / 2) * width + 2) * 4 + 1], data[(Math.floor(height / 2) * width + 2) * 4 + 2]];
      const cols = [], bits = [];
      for (let x = 0; x < width; ++x) {
        let inked = false;
        for (let y = 3; y < height - 3; ++y) {
          const i = (y * width + x) * 4;
          const far = Math.abs(data[i] - bg[0]) + Math.abs(data[i + 1] - bg[1]) + Math.abs(data[i + 2] - bg[2]) > 150;
          bits.push(far ? 1 : 0);
          inked ||= far;
        }
        if (inked && x > 2 && x < width - 3) cols.push(x);
      }
      return { width: cols.length ? cols[cols.length - 1] - cols[0] + 1 : 0, bits: bits.join("") };
    }, png.toString("base64"));
    return { ...ink, chipWidth: r.w };
  }
  const loaded = await open();
  const cat = await chip(loaded.page, "猫 sat");
  const dog = await chip(loaded.page, "犬 sat");
  const blocked = await open({ blockFonts: true });
  const box = await chip(blocked.page, "猫 sat");
  const f = await fontsState(blocked.page);
  assert.ok(f.failed.includes("cjk") && f.placeholder_code_points.includes("U+732B"), JSON.stringify(f));
  console.log(`ink width: 猫 ${cat.width} px, 犬 ${dog.width} px, U+732B box ${box.width} px (chips ${cat.chipWidth}, ${box.chipWidth})`);
  assert.ok(cat.width >= 8 && cat.width <= 20, `a glyph about an em wide: ${cat.width}`);
  assert.ok(box.width > 2 * cat.width, "the placeholder box is much wider than the glyph");
  assert.notEqual(cat.bits, dog.bits, "two ideographs draw differently (not one fallback box)");
  await loaded.context.close();
  await blocked.context.close();
});

test("phone 390×844: the multi-script sentence reads", async () => {
  const { context, page, errors } = await open({ width: 390, height: 844, dpr: 3, mobile: true });
  const f = await setSentence(page, SENTENCE);
  for (const group of NEEDED) assert.ok(f.loaded.includes(group), group);
  await frames(page, 3);
  await page.screenshot({ path: path.join(path.dirname(new URL(import.meta.url).pathname), "out", "fonts-phone-390.png"), scale: "css" });
  assert.deepEqual(errors, []);
  await context.close();
});
