// `attention_cli model` with interventions against PyTorch forward hooks (tests/models/
// torch_interventions.py) on random GPT-2 models of odd shapes: ablated heads (zero and mean), cut
// links, patched heads and streams, direct logit attribution, value-weighted attention, rollout and
// the ablation sweep, every number within 1e-4; attributions add up to the logit; bad specifications
// are refused with exit 2 and one line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT, makeModel, torchInterventions } from "../models/fixtures.mjs";

const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
function cli(args) {
  const r = spawnSync(CLI, args, { encoding: "utf8", timeout: 120000, maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
function ours(args) {
  const r = cli(args);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const TIRED = "The animal didn't cross the street because it was tired";
const WIDE = "The animal didn't cross the street because it was wide";
const TOL = 1e-4;

// The largest |a − b| over two nested arrays of numbers of the same shape.
function worst(a, b, where = "") {
  if (Array.isArray(a)) {
    assert.ok(Array.isArray(b) && a.length === b.length, `${where}: shapes differ`);
    return a.reduce((m, x, i) => Math.max(m, worst(x, b[i], `${where}[${i}]`)), 0);
  }
  assert.equal(typeof a, "number", `${where}: ${a}`);
  return Math.abs(a - b);
}
let largest = 0;  // the largest difference from PyTorch seen, for the log
function close(a, b, what, tol = TOL) {
  const d = worst(a, b, what);
  largest = Math.max(largest, d);
  assert.ok(d <= tol, `${what}: within ${tol} of PyTorch (worst ${d})`);
  return d;
}

const MODELS = [
  { layers: 2, heads: 3, embd: 24, dtype: "F32", seed: 11 },
  { layers: 3, heads: 4, embd: 36, dtype: "BF16", seed: 12 },  // head width 9
];

test("ablation, cut links, attribution, value-weighted attention, rollout and the sweep match PyTorch hooks", () => {
  for (const config of MODELS) {
    const dir = makeModel(config);
    for (const kind of ["zero", "mean"]) {
      const got = ours(["model", "--dir", dir, "--text", TIRED, "--ablate", "1.2,0.0", "--ablate-kind", kind,
        "--cut", "1.*:9-2,0.1:8-3", "--target", "Ġstreet", "--against", " animal", "--sweep", "heads"]);
      const T = got.token_ids.length;
      assert.equal(got.at, T - 1);
      assert.equal(got.target.token, " street");
      assert.equal(got.against.token, " animal");
      const ref = torchInterventions({ dir, ids: got.token_ids, at: got.at, target: got.target.id, against: got.against.id,
        ablate: [[1, 2], [0, 0]], ablate_kind: kind, cuts: [{ layer: 1, head: "all", query: 9, key: 2 }, { layer: 0, head: 1, query: 8, key: 3 }],
        sweep_ablation: true });
      close(got.log_prob, ref.log_prob, "log p before");
      close(got.intervened.log_prob, ref.intervened_log_prob, "log p after");
      close(got.intervened.delta_log_prob, ref.intervened_log_prob - ref.log_prob, "Δ log p");
      close(got.intervened.attention, ref.attention, "attention with the cuts");
      for (let h = 0; h < config.heads; ++h) assert.equal(got.intervened.attention[1][h][9][2], 0, `head 1.${h}: the cut link is 0`);
      assert.equal(got.intervened.attention[0][1][8][3], 0);
      assert.notEqual(got.intervened.attention[0][0][8][3], 0, "a head without the cut keeps its link");
      const a = got.attribution, r = ref.attribution;
      for (const key of ["logit", "offset", "embeddings", "heads", "biases", "mlps"]) close(a[key], r[key], `attribution ${key}`);
      close(a.sum, a.logit, "the parts add up to the logit", 1e-4 * Math.max(1, Math.abs(a.logit)));
      close(got.value_norms, ref.value_norms, "value norms");
      close(got.value_weighted, ref.value_weighted, "value-weighted attention");
      close(got.rollout, ref.rollout, "rollout");
      assert.equal(got.sweep.kind, "ablate_heads");
      close(got.sweep.values, ref.ablation_sweep, "the single-head ablation sweep");
      console.log(`# ${JSON.stringify(config)} ${kind}: Δ log p ${got.intervened.delta_log_prob.toFixed(4)}, ` +
        `logit ${a.logit.toFixed(4)} = sum ${a.sum.toFixed(4)}; largest difference from PyTorch so far ${largest.toExponential(1)}`);
    }
  }
});

test("the built-in trained model: ablating each head and cutting 'the' from 'dog', against PyTorch hooks", () => {
  const dir = path.join(ROOT, "build/native/trained");
  const text = "the dog didn't cross the street because it was tired . it refers to the";
  const got = ours(["model", "--dir", dir, "--text", text, "--cut", "0.*:16-1", "--target", "dog", "--against", "street", "--sweep", "heads"]);
  assert.equal(got.tokens[1], "dog");
  assert.equal(got.next.at(-1)[0].token, "dog", "the trained model's answer");
  const ref = torchInterventions({ dir, ids: got.token_ids, at: got.at, target: got.target.id, against: got.against.id,
    cuts: [{ layer: 0, head: "all", query: 16, key: 1 }], sweep_ablation: true });
  close(got.intervened.log_prob, ref.intervened_log_prob, "log p(dog) with the link cut");
  close(got.intervened.attention, ref.attention, "attention with the link cut");
  close(got.sweep.values, ref.ablation_sweep, "each head ablated alone");
  for (const key of ["logit", "offset", "embeddings", "heads", "biases", "mlps"]) close(got.attribution[key], ref.attribution[key], `attribution ${key}`);
  console.log(`# trained model: log p(dog) ${got.log_prob.toFixed(4)} → ${got.intervened.log_prob.toFixed(4)} with 'the' cut from 'dog'; ` +
    `heads ablated: ${got.sweep.values[0].map((v) => v.toFixed(3)).join(", ")}; dog − street by head: ${got.attribution.heads[0].map((v) => v.toFixed(2)).join(", ")}`);
});

test("patching a head and a stream from the tired sentence into the wide one matches PyTorch hooks", () => {
  const dir = makeModel(MODELS[1]);
  const got = ours(["model", "--dir", dir, "--text", WIDE, "--patch-from", TIRED, "--patch", "2.1,1.3",
    "--patch-resid", "1@4", "--target", "#7", "--at", "9"]);
  const source = ours(["model", "--dir", dir, "--text", TIRED, "--top", "1"]);
  const ref = torchInterventions({ dir, ids: got.token_ids, source_ids: source.token_ids, at: 9, target: 7,
    patch_heads: [[2, 1], [1, 3]], patch_resid: [[1, 4]] });
  close(got.patch.source_log_prob, ref.source_log_prob, "A's log p");
  close(got.patch.base_log_prob, ref.log_prob, "B's log p");
  close(got.patch.patched_log_prob, ref.intervened_log_prob, "patched log p");
  close(got.intervened.attention, ref.attention, "attention of the patched run");
  const { source_log_prob: A, base_log_prob: B, patched_log_prob: P } = got.patch;
  if (Math.abs(A - B) < 0.01) assert.equal(got.patch.restored, null);
  else close(got.patch.restored, (P - B) / (A - B), "restored fraction", 1e-9);
  // the sweeps' cells are the single patches
  const heads = ours(["model", "--dir", dir, "--text", WIDE, "--patch-from", TIRED, "--sweep", "heads", "--target", "#7", "--at", "9"]);
  const one = ours(["model", "--dir", dir, "--text", WIDE, "--patch-from", TIRED, "--patch", "2.1", "--target", "#7", "--at", "9"]);
  assert.equal(heads.sweep.kind, "patch_heads");
  assert.equal(heads.sweep.values.length, 3);
  assert.equal(heads.sweep.values[0].length, 4);
  if (one.patch.restored === null) assert.equal(heads.sweep.values[2][1], null);
  else close(heads.sweep.values[2][1], one.patch.restored, "sweep cell 2.1", 1e-5);
  const positions = ours(["model", "--dir", dir, "--text", WIDE, "--patch-from", TIRED, "--sweep", "positions", "--target", "#7", "--at", "9"]);
  assert.equal(positions.sweep.values.length, 3);
  assert.equal(positions.sweep.values[0].length, got.token_ids.length);
  // the texts differ at one position only ("tired" / "wide"): patching its stream at layer 0 restores all of it
  const differs = got.token_ids.findIndex((id, i) => id !== source.token_ids[i]);
  if (positions.sweep.values[0][differs] !== null) close(positions.sweep.values[0][differs], 1, "layer 0 at the differing token", 1e-4);
});

test("an intervention of nothing changes nothing; bad specifications are refused with exit 2 and one line", () => {
  const dir = makeModel({ layers: 2, heads: 2, embd: 16, seed: 13 });
  const plain = ours(["model", "--dir", dir, "--text", TIRED]);
  const none = ours(["model", "--dir", dir, "--text", TIRED, "--at", "3"]);
  assert.deepEqual(none.next, plain.next, "the same next tokens, bit for bit");
  assert.equal(none.intervened, undefined);
  for (const [args, words] of [
    [["--ablate", "0.2"], "head 2 is outside the layer"],
    [["--ablate", "2.0"], "layer 2 is outside the model"],
    [["--ablate", "1"], "is not LAYER.HEAD"],
    [["--ablate-kind", "half", "--ablate", "0.0"], "--ablate-kind must be zero or mean"],
    [["--cut", "0.0:0-0"], "leaves query 0 no key"],
    [["--cut", "0.*:2-5"], "hidden by the mask already"],
    [["--cut", "0.0:40-1"], "outside the text"],
    [["--cut", "0.0-3"], "is not LAYER.HEAD:QUERY-KEY"],
    [["--patch-from", "The animal"], "say what to copy"],
    [["--patch-from", "The animal", "--patch", "0.0"], "the two texts must have the same number of tokens"],
    [["--patch", "0.0"], "give it with --patch-from"],
    [["--patch-resid", "0@x", "--patch-from", WIDE], "--patch-resid position must be"],
    [["--sweep", "positions"], "it needs the text to copy from"],
    [["--sweep", "layers"], "--sweep must be heads or positions"],
    [["--target", "notonetoken xyz"], "is not one token of this model's vocabulary"],
    [["--target", "#50257"], "is not a token id"],
    [["--at", "99", "--ablate", "0.0"], "outside the text"],
  ]) {
    const r = cli(["model", "--dir", dir, "--text", TIRED, ...args]);
    assert.equal(r.status, 2, `${args.join(" ")}: exit 2 (${r.stderr})`);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, `${args.join(" ")}: one line: ${r.stderr}`);
    assert.ok(lines[0].includes(words), `${args.join(" ")}: '${lines[0]}' names '${words}'`);
  }
});
