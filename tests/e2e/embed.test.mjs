// Embedding: the course-page example (iframe + loader), the postMessage API and its origin checks,
// URL parameters, permalinks, keyboard-only use, embeds at 320×240 and 800×600, and the loader's
// failures (the frame's reason, a timeout, file:// pages).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, holdKey, DIST } from "./harness.mjs";

let server, other, browser, otherDir;
before(async () => {
  server = await serveStatic();
  otherDir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-other-origin-"));
  other = await serveStatic(otherDir);  // another port: another origin
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.close(); await other?.close(); });

/** Waits until the explainer inside the iframe `frameSelector` has drawn its first frame. */
async function frameReady(page, frameSelector) {
  const handle = await page.waitForSelector(frameSelector);
  const frame = await handle.contentFrame();
  await frame.waitForFunction(() => window.attentionExplainer && window.attentionExplainer.ready);
  await frame.evaluate(() => window.attentionExplainer.ready.then(() => true));
  return frame;
}

test("embed-example.html: the loader mounts the explainer and the page drives it by postMessage", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "embed-example.html", { waitReady: false });
  await frameReady(page, "#library-demo iframe");
  await frameReady(page, "#plain-iframe");
  const initial = await page.evaluate(() => document.getElementById("library-demo").attentionExplainer.getState());
  assert.equal(initial.view, "library");
  assert.equal(initial.embed, true);
  assert.deepEqual([...initial.views].sort(), ["library", "weights"]);
  await page.click("#pick-tired");
  await page.waitForFunction(() => document.getElementById("readout").textContent.includes("tired"));
  const changed = await page.evaluate(() => document.getElementById("library-demo").attentionExplainer.getState());
  assert.equal(changed.token_text, "tired");
  await page.click("#toggle-causal");
  await page.waitForFunction(async () =>
    (await document.getElementById("library-demo").attentionExplainer.getState()).causal === true);
  const refused = await page.evaluate(() => document.getElementById("library-demo").attentionExplainer
    .setState({ temperature: "hot" }).then(() => "accepted", (e) => e.message));
  assert.match(refused, /^temperature:/);
  const plain = await (await frameReady(page, "#plain-iframe")).evaluate(() => window.attentionExplainer.getState());
  assert.equal(plain.view, "weights");
  assert.equal(plain.token_text, "it");
  assert.deepEqual(errors, []);
  await context.close();
});

test("postMessage: only the named embedding origin is obeyed; malformed messages are ignored", async () => {
  // A page on another origin embeds two explainers: one that names this origin, one that names a stranger.
  const explainer = server.url + "index.html?embed=1&view=weights";
  fs.writeFileSync(path.join(otherDir, "host.html"), `<!doctype html><link rel="icon" href="data:,"><body>
    <iframe id="trusting" width="400" height="300" src="${explainer}&origin=${encodeURIComponent(other.url.slice(0, -1))}"></iframe>
    <iframe id="stranger" width="400" height="300" src="${explainer}&origin=${encodeURIComponent("http://127.0.0.1:1")}"></iframe>
    <script>
      window.replies = [];
      addEventListener("message", (e) => { if (e.data && e.data.type === "attention-explainer:reply") replies.push(e.data); });
    </script></body>`);
  const { page, context, errors } = await openExplainer(browser, other.url + "host.html", { waitReady: false });
  const trusting = await frameReady(page, "#trusting");
  const stranger = await frameReady(page, "#stranger");
  const send = (id, message) => page.evaluate(([frameId, m]) =>
    document.getElementById(frameId).contentWindow.postMessage(m, "*"), [id, message]);
  await send("trusting", { type: "attention-explainer:setState", id: 1, state: { causal: true } });
  await send("stranger", { type: "attention-explainer:setState", id: 2, state: { causal: true } });
  for (const junk of ["text", 42, null, [1, 2], { type: 7 }, { type: "attention-explainer:setState", id: 3, state: "x" },
    { type: "attention-explainer:setState", id: 4, state: [1] }, { type: "attention-explainer:nope", id: 5 },
    { type: "attention-explainer:setState", id: 6, state: { view: "missing" } }])
    await send("trusting", junk);
  await page.waitForFunction(() => window.replies.some((r) => r.id === 6));
  const replies = await page.evaluate(() => window.replies);
  const byId = Object.fromEntries(replies.map((r) => [r.id, r]));
  assert.equal(byId[1].ok, true);
  assert.equal(byId[1].state.causal, true);
  assert.equal(byId[2], undefined, "the explainer that names another origin does not answer");
  assert.equal(byId[3].ok, false);
  assert.equal(byId[4].ok, false);
  assert.match(byId[5].error, /unknown message type/);
  assert.match(byId[6].error, /^view:/);
  assert.equal((await trusting.evaluate(() => window.attentionExplainer.getState())).causal, true);
  assert.equal((await stranger.evaluate(() => window.attentionExplainer.getState())).causal, false);
  assert.deepEqual(errors, []);
  await context.close();
});

const URL_CASES = [
  ["view=weights", (s) => s.view === "weights"],
  ["view=derive", (s) => s.view === "derive"],
  ["sentence=The%20dog%20saw%20it", (s) => s.tokens.join(" ") === "The dog saw it" && s.token_text === "it"],
  ["token=animal", (s) => s.token_text === "animal"],
  ["token=2", (s) => s.token === 2],
  ["causal=1", (s) => s.causal === true],
  ["scale=0", (s) => s.scale === false],
  ["temperature=2.5", (s) => Math.abs(s.temperature - 2.5) < 1e-6],
  ["cross=1&kv_sentence=A%20cat%20slept", (s) => s.cross && s.kv_tokens.join(" ") === "A cat slept"],
  ["mistake=mask_with_zero", (s) => s.mistake === "mask_with_zero"],
  ["theme=light", (s) => s.theme === "light"],
  ["embed=1&views=weights,library", (s) => s.embed && s.views.join() === "weights,library"],
  ["view=cost&backend=eigen&cost_T=256",
    (s) => s.backend === "eigen" && s.backend_live.name === "eigen" && s.view_data.matrix.T === 256 && s.view_data.matrix.backend === "eigen"],
];
for (const [query, check] of URL_CASES) {
  test(`URL parameter opens its state: ?${query}`, async () => {
    const { page, context, errors } = await openExplainer(browser, server.url + "?" + query);
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    assert.ok(check(s), JSON.stringify({ view: s.view, token: s.token_text, causal: s.causal, scale: s.scale }));
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("invalid URL parameters are ignored with a warning, never a crash", async () => {
  const warnings = [];
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "warning") warnings.push(m.text()); });
  await page.goto(server.url + "?view=nope&token=zebra&causal=maybe&temperature=-3&sentence=&frob=1&views=x,y" +
    "&backend=cuda&cost_T=9999");
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.view, "flow");
  assert.equal(s.token_text, "it");
  assert.equal(s.causal, false);
  assert.equal(s.temperature, 1);
  assert.equal(s.backend, "auto");
  assert.equal(s.cost_T, 2048);
  for (const key of ["view", "token", "causal", "temperature", "sentence", "frob", "views", "backend", "cost_T"])
    assert.ok(warnings.some((w) => w.includes(key)), `a warning names ${key}: ${warnings.join(" | ")}`);
  await context.close();
});

test("the address bar is a permalink: reopening it restores the same state", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  await page.evaluate(() => window.attentionExplainer.setState({ sentence: "The cat saw the dog because it was hungry",
    token: "dog", causal: true, temperature: 0.5, view: "weights", mistake: "forget_scale" }));
  const link = await page.evaluate(() => window.attentionExplainer.permalink());
  // the address bar follows the state (a moment later: it is not rewritten on every frame of a drag)
  await page.waitForFunction((expected) => location.href === expected, link, { timeout: 5000 });
  const first = await page.evaluate(() => window.attentionExplainer.getState());
  const reopened = await openExplainer(browser, link);
  const second = await reopened.page.evaluate(() => window.attentionExplainer.getState());
  for (const key of ["sentence", "token", "causal", "temperature", "view", "mistake", "scale"]) assert.deepEqual(second[key], first[key], key);
  assert.deepEqual(second.weights, first.weights);
  await reopened.context.close();
  await context.close();
});

test("keyboard only: ] and [ change the selected token; arrow keys and Space operate the controls", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  await page.focus("#canvas");
  await page.keyboard.press("]");
  await frames(page, 3);
  assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).token_text, "was");
  await page.keyboard.press("[");
  await page.keyboard.press("[");
  await frames(page, 3);
  assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).token_text, "because");
  // Dear ImGui's keyboard navigation: arrows move the focus between widgets, Space activates.
  const start = await page.evaluate(() => window.attentionExplainer.getState());
  let changed = null;
  for (let i = 0; i < 16 && !changed; i++) {
    await holdKey(page, "ArrowDown");
    await holdKey(page, "Space");
    await holdKey(page, "Escape");  // closes a combo opened on the way
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    for (const key of ["causal", "scale", "cross", "token", "theme"]) if (s[key] !== start[key]) changed = key;
  }
  assert.ok(changed, "arrow keys + Space reached a control and changed an input");
  await context.close();
});

for (const [width, height] of [[320, 240], [800, 600]]) {
  test(`embed at ${width}×${height} draws the chosen view`, async () => {
    const { page, context, errors } = await openExplainer(browser, server.url + "?embed=1&view=library",
      { width, height });
    await frames(page, 5);
    const { png } = await screenshot(page, `embed-${width}x${height}`);
    const { colours } = await distinctColours(page, png);
    assert.ok(colours > 30, `${colours} colours`);
    assert.ok(await page.isVisible("#open-full"), "the 'open full explainer' link shows");
    const href = await page.getAttribute("#open-full", "href");
    assert.ok(!href.includes("embed=1"), "the link opens the full explainer");
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("the screen-reader summary names the selected token's top keys", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  await frames(page, 3);
  const text = await page.textContent("#summary");
  assert.match(text, /"it".*animal 0\.6/);
  assert.equal(await page.getAttribute("#summary", "aria-live"), "polite");
  await context.close();
});

// [SECTION] The loader fails loudly: the frame's reason, a timeout, file:// pages

/** A folder that serves dist/ as links, less the files `without`, plus `extra` {name: text}. */
function siteCopy(without, extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-site-"));
  for (const entry of fs.readdirSync(DIST))
    if (!without.includes(entry)) fs.symlinkSync(path.join(DIST, entry), path.join(dir, entry));
  for (const [name, text] of Object.entries(extra)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}
const hostPage = (embedSrc, attributes = "") => `<!doctype html><link rel="icon" href="data:,"><body>
  <div id="host" data-attention-explainer data-view="weights" ${attributes}></div>
  <script src="${embedSrc}"></script>
  <script>
    const e = document.getElementById("host").attentionExplainer;
    const settle = (p) => p.then(() => "resolved", (err) => "rejected: " + err.message);
    window.early = settle(e.getState());  // a request made before the frame is ready
    window.readyResult = settle(e.ready);
    window.late = e.ready.catch(() => {}).then(() => settle(e.setState({ causal: true })));
  </script></body>`;

test("a frame that cannot start: ready and every request reject with the frame's own reason", async () => {
  const dir = siteCopy(["ui_font.ttf"], { "host.html": hostPage("embed.js") });
  const site = await serveStatic(dir);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(site.url + "host.html");
  const results = await page.evaluate(async () => [await window.readyResult, await window.early, await window.late]);
  for (const r of results) assert.match(r, /^rejected: the explainer could not start: could not load ui_font\.ttf/, r);
  await context.close();
  await site.close();
});

test("a frame that never answers: ready rejects after data-timeout, and so do the requests", async () => {
  const dir = siteCopy(["index.html"], { "index.html": "<!doctype html><title>not the explainer</title>",
    "host.html": hostPage("embed.js", 'data-timeout="1500"') });
  const site = await serveStatic(dir);
  const context = await browser.newContext();
  const page = await context.newPage();
  const t0 = Date.now();
  await page.goto(site.url + "host.html");
  const results = await page.evaluate(async () => [await window.readyResult, await window.early, await window.late]);
  for (const r of results) assert.match(r, /^rejected: the explainer did not start within 1\.5 s/, r);
  assert.ok(Date.now() - t0 >= 1500, "not before the timeout");
  await context.close();
  await site.close();
});

test("file:// course pages: with the explainer on http(s) they work; with it on file:// they say why not", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-file-page-"));
  fs.writeFileSync(path.join(dir, "remote.html"), hostPage(server.url + "embed.js"));
  fs.copyFileSync(path.join(DIST, "embed.js"), path.join(dir, "embed.js"));
  fs.writeFileSync(path.join(dir, "local.html"), hostPage("embed.js"));
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto("file://" + path.join(dir, "remote.html"));
  assert.equal(await page.evaluate(() => window.readyResult), "resolved", "an http explainer in a file:// page");
  assert.equal(await page.evaluate(() => window.late), "resolved");
  const state = await page.evaluate(() => document.getElementById("host").attentionExplainer.getState());
  assert.equal(state.causal, true);
  assert.equal(state.view, "weights");

  await page.goto("file://" + path.join(dir, "local.html"));
  const results = await page.evaluate(async () => [await window.readyResult, await window.early, await window.late]);
  for (const r of results) assert.match(r, /^rejected: .*must be served over http\(s\)/, r);
  assert.match(await page.textContent("#host [role=alert]"), /served over http\(s\)/);
  await context.close();
});
