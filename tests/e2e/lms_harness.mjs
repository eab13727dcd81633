// Shared set-up for the course-site tests (scorm, h5p, xapi): packages built from dist/ and extracted the
// way an LMS unpacks them, and real clicks and typing on the explainer inside a frame. Not a test itself.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { buildPackage } from "../../tools/package_lms.mjs";
import { DIST, frames, clickRect, holdKey } from "./harness.mjs";

const require = createRequire(import.meta.url);
const { unzipSync } = require("fflate");
export const NODE_MODULES = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../node_modules");

/** Builds `kind`'s package into a temp dir and extracts it into root/<kind>/; returns {root, dir, file, names}. */
export function extractedPackage(kind, root = fs.mkdtempSync(path.join(os.tmpdir(), `attn-${kind}-`))) {
  const { file } = buildPackage(kind, { dist: DIST, out: path.join(root, "zips") });
  const files = unzipSync(new Uint8Array(fs.readFileSync(file)));
  const dir = path.join(root, kind);
  for (const [name, data] of Object.entries(files)) {
    if (name.endsWith("/")) continue;
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), data);
  }
  return { root, dir, file, names: Object.keys(files) };
}

/** The frame (of any depth) whose window has the explainer, once it is ready. */
export async function explainerFrame(page, { timeout = 60000 } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    for (const f of page.frames()) {
      try {
        if (await f.evaluate(() => !!(window.attentionExplainer && window.attentionExplainer.ready))) {
          await f.evaluate(() => window.attentionExplainer.ready.then(() => true));
          return f;
        }
      } catch (e) { /* navigating, or not ready to be asked */ }
    }
    if (Date.now() > end) throw new Error("no frame with a ready explainer");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Drives the explainer in `frame` with the page's real mouse and keyboard (the frame's offset added). */
export function driver(page, frame) {
  const offset = async () => {
    if (frame === page.mainFrame()) return { x: 0, y: 0, w: page.viewportSize().width, h: page.viewportSize().height };
    const box = await (await frame.frameElement()).boundingBox();
    return { x: box.x, y: box.y, w: box.width, h: box.height };
  };
  const rect = (name) => frame.evaluate((n) => window.attentionExplainer.itemRect(n), name);
  async function shown(name) {
    const box = await offset();
    for (let tries = 0; tries < 14; tries++) {
      const r = await rect(name);
      if (r.y >= 40 && r.y + r.h <= Math.min(box.h, page.viewportSize().height - box.y) - 4)
        return { x: box.x + r.x, y: box.y + r.y, w: r.w, h: r.h };
      await page.mouse.move(box.x + box.w * 0.6, box.y + Math.min(box.h, 600) / 2);
      await page.mouse.wheel(0, r.y < 40 ? -300 : 300);
      await frames(frame, 4);
    }
    throw new Error(`${name} could not be scrolled into view`);
  }
  return {
    rect, shown,
    async openView(view) {
      await frame.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
      await frames(frame, 4);
    },
    async click(name) { await clickRect(page, await shown(name)); await frames(frame, 3); },
    async type(name, text) {
      await clickRect(page, await shown(name));
      await page.keyboard.type(text, { delay: 20 });
      await frames(frame, 2);
      await holdKey(page, "Enter");
      await frames(frame, 3);
    },
    /** The weights view's check: the index of a right and of a wrong choice. */
    async weightsChoices() {
      return frame.evaluate(() => {
        const s = window.attentionExplainer.getState(), asked = s.view_data.check;
        const row = s.weights[s.token], top = Math.max(...row);
        const right = asked.choices.findIndex((c) => row[s.kv_tokens.indexOf(c)] === top);
        const wrong = asked.choices.findIndex((c) => row[s.kv_tokens.indexOf(c)] < top - 1e-6);
        return { right, wrong, choices: asked.choices };
      });
    },
  };
}

/** Every check answered at once through setState (for the statuses; the marks are the app's): each view's
 *  check right or wrong, each of Derive's 45 cells "-99" (wrong: no number of the lesson is that). */
export function allAnswered({ viewsRight }) {
  const checks = {};
  for (const v of ["flow", "weights", "library", "steps", "break", "mistakes", "build", "cost", "compare"])
    checks[v] = { answer: "x", question: "", right: viewsRight, passed: viewsRight };
  const shapes = { scores: [3, 3], scaled: [3, 3], exp: [3, 3], sums: [3, 1], weights: [3, 3], output: [3, 2] };
  for (const [stage, [rows, cols]] of Object.entries(shapes))
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) checks[`derive.${stage}.${r}.${c}`] = { answer: "-99", question: "", right: false, passed: false };
  return checks;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export async function until(fn, what, timeout = 15000) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
