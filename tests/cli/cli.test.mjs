// The native CLI end to end: compute, break, explain, and a table of bad inputs (exit status 2,
// one line on stderr, nothing on stdout). Needs build/native/attention_cli (the test command builds it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");

function run(args, input = "") {
  const r = spawnSync(CLI, args, { input, encoding: "utf8", timeout: 20000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

test("compute: the lesson's Derive numbers", () => {
  const r = run(["compute"], JSON.stringify({ Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]], V: [[1, 2], [3, 4], [5, 6]] }));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  const out = JSON.parse(r.stdout);
  const round2 = (m) => m.map((row) => row.map((v) => Math.round(v * 100) / 100));
  assert.deepEqual(round2(out.weights), [[0.4, 0.2, 0.4], [0.2, 0.4, 0.4], [0.25, 0.25, 0.5]]);
  assert.deepEqual(round2(out.output), [[3, 4], [3.41, 4.41], [3.51, 4.51]]);
});

test("compute: causal cross-attention with X/W and every backend agreeing", () => {
  const req = { X: [[1, 0], [0, 1], [1, 1]], X_kv: [[1, 0], [0, 1], [2, 1], [1, 3]], Wq: [[1, 0], [0, 1]],
    Wk: [[1, 0], [0, 1]], Wv: [[1, 2, 3], [4, 5, 6]], causal: true };
  const results = ["scalar", "eigen", "simd"].map((backend) => JSON.parse(run(["compute"], JSON.stringify({ ...req, backend })).stdout));
  for (const r of results) {
    assert.equal(r.weights.length, 3);
    assert.equal(r.weights[0].length, 4);
    assert.equal(r.output[0].length, 3);
    assert.equal(r.scores[0][1], null);
    assert.equal(r.weights[0][1], 0);
    for (let j = 0; j < 4; j++) for (let i = 0; i < 3; i++) assert.ok(Math.abs(r.weights[i][j] - results[0].weights[i][j]) < 1e-6);
  }
});

test("break: the lesson's regime at d=512, T=64", () => {
  const r = run(["break", "--d", "512", "--T", "64", "--seed", "0"]);
  assert.equal(r.status, 0, r.stderr);
  const b = JSON.parse(r.stdout);
  assert.equal(b.scaled.frac_one_hot, 0);
  assert.ok(Math.abs(b.scaled.mean_entropy - 3.7) < 0.2);
  assert.ok(b.unscaled.frac_one_hot > 0.5);
  assert.ok(b.unscaled.mean_entropy < 0.5);
  assert.ok(b.scaled.median_row_grad >= 10 * b.unscaled.median_row_grad);
  assert.ok(Math.abs(b.gradient_ratio_raw - b.gradient_ratio / Math.sqrt(512)) < 1e-3 * b.gradient_ratio_raw);
  assert.ok(b.seed_range.min <= b.gradient_ratio && b.gradient_ratio <= b.seed_range.max);
  for (const k of ["score_std", "frac_one_hot", "mean_entropy", "median_row_grad", "min_row_grad",
    "median_row_grad_raw", "q_grad_norm"]) {
    assert.equal(typeof b.scaled[k], "number");
    assert.equal(typeof b.unscaled[k], "number");
  }
});

test("explain: a readable trace, 'it' ranks 'animal' first", () => {
  const r = run(["explain"]);
  assert.equal(r.status, 0, r.stderr);
  const ranked = r.stdout.split("\n").filter((l) => /^\s{2}\S.*#\d+\)/.test(l));
  assert.match(ranked[0], /animal/);
  assert.match(r.stdout, /Tokens \(T = 10\)/);
  const tired = run(["explain", "--token", "tired", "--causal"]);
  assert.equal(tired.status, 0);
  assert.match(tired.stdout, /Query of 'tired'/);
  assert.match(tired.stdout, /masked|causal/);
});

// Each bad input: exit 2, exactly one line on stderr naming the problem, nothing on stdout.
const BAD = [
  ["malformed JSON", ["compute"], "{\"Q\": [[1,2]", /malformed JSON/],
  ["not an object", ["compute"], "[1, 2]", /JSON object/],
  ["empty input", ["compute"], "", /malformed JSON/],
  ["ragged rows", ["compute"], JSON.stringify({ Q: [[1, 2], [3]], K: [[1, 2]], V: [[1]] }), /ragged/],
  ["shape mismatch", ["compute"], JSON.stringify({ Q: [[1, 2]], K: [[1, 2, 3]], V: [[1]] }), /same width/],
  ["K/V rows differ", ["compute"], JSON.stringify({ Q: [[1]], K: [[1], [2]], V: [[1]] }), /same number of rows/],
  ["empty matrix", ["compute"], JSON.stringify({ Q: [], K: [[1]], V: [[1]] }), /empty/],
  ["empty row", ["compute"], JSON.stringify({ Q: [[]], K: [[1]], V: [[1]] }), /empty/],
  ["NaN-like string", ["compute"], JSON.stringify({ Q: [["NaN"]], K: [[1]], V: [[1]] }), /not a number/],
  ["NaN literal", ["compute"], "{\"Q\": [[NaN]], \"K\": [[1]], \"V\": [[1]]}", /malformed JSON/],
  ["Infinity overflow", ["compute"], "{\"Q\": [[1e999]], \"K\": [[1]], \"V\": [[1]]}", /malformed JSON|finite/],
  ["too large value", ["compute"], JSON.stringify({ Q: [[1e300]], K: [[1]], V: [[1]] }), /finite number/],
  ["null entry", ["compute"], JSON.stringify({ Q: [[null]], K: [[1]], V: [[1]] }), /not a number/],
  ["too many rows", ["compute"], JSON.stringify({ Q: Array.from({ length: 5000 }, () => [1]), K: [[1]], V: [[1]] }), /limit/],
  ["deep nesting", ["compute"], "[".repeat(200000) + "]".repeat(200000), /nested deeper/],
  ["unknown backend", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], backend: "cuda" }), /backend/],
  ["unknown key", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], mask: true }), /unknown key/],
  ["bad causal", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], causal: 1 }), /causal/],
  ["both input forms", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], X: [[1]] }), /either/],
  ["missing W", ["compute"], JSON.stringify({ X: [[1]], Wq: [[1]], Wk: [[1]] }), /missing "Wv"/],
  ["W shape", ["compute"], JSON.stringify({ X: [[1, 2]], Wq: [[1]], Wk: [[1]], Wv: [[1]] }), /Wq/],
  ["options to compute", ["compute", "--fast"], "{}", /takes no options/],
  ["unknown command", ["frobnicate"], "", /unknown command/],
  ["unknown flag", ["break", "--d", "8", "--T", "8", "--speed", "1"], "", /unknown option/],
  ["non-integer d", ["break", "--d", "eight", "--T", "8"], "", /--d must be a whole number/],
  ["d too large", ["break", "--d", "100000", "--T", "8"], "", /--d must be/],
  ["T zero", ["break", "--d", "8", "--T", "0"], "", /--T must be/],
  ["missing value", ["break", "--d"], "", /needs a value/],
  ["empty sentence", ["explain", "--sentence", "   "], "", /empty/],
  ["huge sentence", ["explain", "--sentence", "word ".repeat(20000)], "", /too long/],
  ["token not there", ["explain", "--token", "zebra"], "", /not in the sentence/],
  ["bad temperature", ["explain", "--temperature", "hot"], "", /temperature/],
  ["zero temperature", ["explain", "--temperature", "0"], "", /temperature/],
  // the numeric domain (attention.h): 1/1e-40 would overflow float; 20.5 is past the hottest
  ["temperature 1e-40", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], temperature: 1e-40 }),
    /^error: "temperature" must be a number from 0\.05 to 20 \(got 1e-40\)$/],
  ["temperature 20.5", ["compute"], JSON.stringify({ Q: [[1]], K: [[1]], V: [[1]], temperature: 20.5 }),
    /"temperature" must be a number from 0\.05 to 20/],
  ["explain temperature 0.01", ["explain", "--temperature", "0.01"], "", /temperature must be a number from 0\.05 to 20/],
  ["entry past 1e6", ["compute"], JSON.stringify({ Q: [[1e6 + 1]], K: [[1]], V: [[1]] }), /"Q"\[0\]\[0\].*1e6/],
  ["product past 1e6", ["compute"], JSON.stringify({ X: [[1e6, 1e6]], Wq: [[1e6], [1e6]], Wk: [[1], [1]], Wv: [[1], [1]] }),
    /Q = X·Wq\[0\]\[0\] is too large/],
  // the output limit: 4096 x 1 inputs would ask for two 4096 x 4096 matrices
  ["result too large", ["compute"], JSON.stringify({ Q: Array(4096).fill([1]), K: Array(4096).fill([1]), V: Array(4096).fill([1]) }),
    /the result would hold 33558528 numbers .* the limit is 4194304/],
];

test("compute: both temperature limits accepted, every backend agreeing with the worked numbers", () => {
  // one query, keys scoring 1 and 0 (d = 1): weights e^(1/t) / (e^(1/t) + 1) and 1 / (e^(1/t) + 1)
  for (const temperature of [0.05, 20]) {
    const e = Math.exp(1 / temperature);
    for (const backend of ["scalar", "eigen", "simd"]) {
      const r = run(["compute"], JSON.stringify({ Q: [[1]], K: [[1], [0]], V: [[1], [0]], temperature, backend }));
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.ok(Math.abs(out.weights[0][0] - e / (e + 1)) < 1e-6, `${backend} at ${temperature}: ${out.weights[0][0]}`);
      assert.ok(Math.abs(out.weights[0][1] - 1 / (e + 1)) < 1e-6 * (1 / (e + 1)) + 1e-12, `${backend} at ${temperature}`);
      assert.ok(!JSON.stringify(out).includes("null"), "no null without a mask");
    }
  }
});

for (const [name, args, input, pattern] of BAD) {
  test(`bad input is refused cleanly: ${name}`, () => {
    const r = run(args, input);
    assert.equal(r.signal, null, "no crash, no hang");
    assert.equal(r.status, 2, `exit status for ${name}: ${r.status}; stderr: ${r.stderr}`);
    assert.equal(r.stdout, "", "nothing on stdout");
    const lines = r.stderr.split("\n").filter(Boolean);
    assert.equal(lines.length, 1, `one line on stderr, got: ${r.stderr}`);
    assert.match(lines[0], pattern);
  });
}

// The README's entry point, not only the binary: `./build_wasm.sh cli` builds into build/cli-build.log,
// so a refusal through it is still exit 2 and the CLI's one line on stderr (nothing of cmake's).
test("./build_wasm.sh cli: the build is quiet, stderr carries the CLI's own line alone", { skip: !!process.env.ATTN_CLI }, () => {
  const r = spawnSync(path.join(ROOT, "build_wasm.sh"), ["cli", "compute"], { cwd: ROOT, input: "{bad", encoding: "utf8", timeout: 600000 });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^error: malformed JSON[^\n]*\n$/);
});
