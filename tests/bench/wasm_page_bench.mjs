// attn_bench's tables measured in the page: native_bench.cpp built for the web (em++ against the
// wasm build's attn_core: build/web, SIMD on) and run in headless Chromium by its own command line.
// Prints its stdout, one run per table: the 16-bit matmul (F32 vs F16 vs BF16 on the models'
// shapes) and the whole forward of the models' shapes with where its time goes. Not a test: slow
// numbers never fail it. Results also go to --out (JSON, key "page_wasm").
// usage: node tests/bench/wasm_page_bench.mjs [--web-dir build/web] [--out FILE] [--quick]
//        [--matmul16 "ARGS"] [--forward "ARGS"]   (attn_bench's flags for each run; "" skips it)
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";
import { HERE, ROOT, option, QUICK, OUT } from "./options.mjs";

const WEB_DIR = path.resolve(ROOT, option("--web-dir", "build/web"));
const BUILD = path.join(HERE, "out/web");
const MATMUL16 = option("--matmul16", QUICK ? "--T 16,64 --models smollm2,qwen3 --min-ms 100" : "--T 1,16,64,256 --models gpt2,smollm2,qwen3 --min-ms 200");
const FORWARD = option("--forward", QUICK ? "--models smollm2 --dtype BF16,F32 --T 64 --reps 2" : "--models smollm2,qwen3 --dtype BF16,F32 --T 64,256 --reps 3");
const log = (...a) => console.error("[page wasm bench]", ...a);

// em++ native_bench.cpp + the web build's attn_core: the flags of the app's SIMD build (-O3 -msimd128)
// and a web environment, main run by callMain (stdout through Module.print). Rebuilt when older than its inputs.
function build() {
  const lib = path.join(WEB_DIR, "libattn_core.a");
  if (!fs.existsSync(lib)) throw new Error(`${lib}: missing (./build_wasm.sh site builds it)`);
  const src = path.join(HERE, "native_bench.cpp"), out = path.join(BUILD, "attn_bench_web.js");
  const newest = Math.max(fs.statSync(lib).mtimeMs, fs.statSync(src).mtimeMs);
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs > newest) return;
  fs.mkdirSync(BUILD, { recursive: true });
  log(`em++ ${path.relative(ROOT, src)} -> ${path.relative(ROOT, out)}`);
  execFileSync("em++", ["-std=c++17", "-O3", "-msimd128", "-DNDEBUG", "-I/usr/include/eigen3", src, lib, "-o", out,
    "-sENVIRONMENT=web", "-sALLOW_MEMORY_GROWTH=1", "-sMAXIMUM_MEMORY=4GB", "-sINVOKE_RUN=0", "-sEXIT_RUNTIME=0",
    "-sEXPORTED_RUNTIME_METHODS=callMain", "-sINITIAL_MEMORY=33554432"],
  { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, NODE_PATH: "/usr/share/nodejs" } });
}

async function main() {
  build();
  const server = await serveStatic(ROOT);
  const browser = await launchBrowser();
  const results = {};
  try {
    for (const [name, args] of [["matmul16", MATMUL16], ["forward", FORWARD]]) {
      if (!args.trim()) continue;
      // a fresh page per run: wasm memory never shrinks, and one run's heap is not the next one's
      const page = await (await browser.newContext()).newPage();
      page.on("pageerror", (e) => log("page error", String(e)));
      await page.goto(`${server.url}tests/bench/wasm_bench.html`);
      log(`attn_bench --${name} ${args}`);
      const r = await page.evaluate((a) => window.runBench(a), [`--${name}`, ...args.split(/\s+/).filter(Boolean)]);
      results[name] = { args, ...r };
      console.log(`\nIn the page (headless Chromium, wasm SIMD, 1 thread): attn_bench --${name} ${args}`);
      for (const line of r.lines) console.log(line);
      console.log(`(exit ${r.rc}; ${(r.ms / 1000).toFixed(0)} s; wasm memory at the end ${(r.heap / 1048576).toFixed(0)} MiB)`);
      await page.context().close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  let all = {};
  if (fs.existsSync(OUT)) { try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { all = {}; } }
  all.page_wasm = results;
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(all, null, 2));
}

main().catch((e) => { console.error(`[page wasm bench] ${e.message}`); process.exit(1); });
