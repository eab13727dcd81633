// `attention_cli train` against PyTorch and against the Train experiment's bars: one AdamW step
// matches tests/models/torch_train_step.py within 1e-4 (loss and every updated weight); the default
// recipe's folder opens with `model` and torch_reference.py reproduces its next-token probabilities;
// held-out accuracy, the tired/wide twins and the last layer's heads are measured; bad settings are
// refused by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT, readSafetensors, torchReference } from "../models/fixtures.mjs";

const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const PYTHON = "/usr/bin/python3";
// Under ASan + UBSan (build_wasm.sh test all sets ATTN_SANITIZED=1) the learning runs are skipped: they
// repeat the one-step case's code thousands of times at a sanitizer's 3-5x cost, and the plain CLI suite
// runs them un-sanitized; the one-step, scaling and refusal cases still run sanitized.
const LEARNING = { skip: process.env.ATTN_SANITIZED === "1" && "a learning run: the plain CLI suite runs it" };

function cli(args) {
  const r = spawnSync(CLI, args, { encoding: "utf8", timeout: 300000, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
const tmp = (name) => fs.mkdtempSync(path.join(os.tmpdir(), `attn-train-${name}-`));

test("train: one step equals PyTorch's (loss and every updated weight within 1e-4)", () => {
  const cases = [
    ["--seed", "4", "--layers", "2"],
    ["--seed", "5", "--no-scale", "--all-tokens", "--heads", "4", "--d-model", "64", "--grad-clip", "0", "--lr", "0.01"],
    ["--seed", "6", "--layers", "3", "--heads", "1", "--d-model", "16", "--batch", "5", "--weight-decay", "0.2"],
  ];
  for (const extra of cases) {
    const init = tmp("init"), after = tmp("after");
    const r = cli(["train", "--steps", "1", "--out", after, "--init-out", init, ...extra]);
    assert.equal(r.status, 0, r.stderr);
    const ours = JSON.parse(r.stdout);
    const t = spawnSync(PYTHON, [path.join(ROOT, "tests/models/torch_train_step.py"), "--init", init, "--after", after],
      { encoding: "utf8", cwd: path.join(ROOT, "tests/models") });
    assert.equal(t.status, 0, t.stderr);
    const ref = JSON.parse(t.stdout);
    const layers = extra.includes("--layers") ? Number(extra[extra.indexOf("--layers") + 1]) : 1;  // default: 1
    assert.equal(ref.tensors, 4 + 12 * layers, "every tensor compared");
    assert.ok(Math.abs(ours.final_loss - ref.loss) <= 1e-4, `${extra.join(" ")}: loss ${ours.final_loss} vs ${ref.loss}`);
    assert.ok(ref.max_abs_diff <= 1e-4, `${extra.join(" ")}: worst weight ${ref.worst} differs by ${ref.max_abs_diff}`);
    assert.ok(ref.max_abs_diff > 0 || ours.final_loss > 0);
  }
});

test("train: the default recipe meets the bars for seeds 2 and 3 too", LEARNING, () => {
  for (const seed of ["2", "3"]) {
    const r = cli(["train", "--seed", seed, "--steps", "1500", "--out", tmp(`seed${seed}`), "--eval-every", "1500"]);
    assert.equal(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    console.log(`seed ${seed}:`, JSON.stringify(result));
    assert.ok(result.heldout_accuracy >= 0.95, `seed ${seed}: held-out accuracy ${result.heldout_accuracy}`);
    assert.ok(result.twin_accuracy >= 0.9, `seed ${seed}: twins ${result.twin_accuracy}`);
    assert.ok(result.any_head_share >= 0.9, `seed ${seed}: per-triple heads share ${result.any_head_share}`);
  }
});

test("train: the default recipe learns the referent; its folder opens in the CLI and in PyTorch alike", LEARNING, () => {
  const out = tmp("model");
  const r = cli(["train", "--seed", "1", "--steps", "1500", "--out", out, "--eval-every", "1500"]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  console.log("default recipe:", JSON.stringify(result));
  assert.deepEqual(Object.keys(result).filter((k) => ["steps", "seconds", "final_loss", "heldout_accuracy"].includes(k)).sort(),
    ["final_loss", "heldout_accuracy", "seconds", "steps"]);
  assert.equal(result.steps, 1500);
  assert.ok(result.heldout_accuracy >= 0.95, `held-out accuracy ${result.heldout_accuracy}`);
  assert.ok(result.twin_accuracy >= 0.9, `tired/wide twins both right: ${result.twin_accuracy}`);
  // The heads bar, strict reading (ONE last-layer head right for ≥ 90%): impossible in layer 0, whose
  // head weights at the predict position cannot depend on the adjective (its keys are token +
  // position only), so of each tired/wide twin pair exactly one sentence has the right noun above the
  // other: exactly half. The default recipe (1 layer) meets the per-triple reading: for ≥ 90% of
  // held-out sentences SOME last-layer head weighs the right noun above the other.
  assert.equal(result.best_head_share_per_layer[0], 0.5);
  assert.ok(result.any_head_share >= 0.9, `per-triple heads share ${result.any_head_share}`);
  // the per-triple reading (some head of the layer right, sentence by sentence) is never below the
  // strict one (one head right) and its last layer's value is the top-level number
  assert.equal(result.any_head_share, result.any_head_share_per_layer.at(-1));
  result.any_head_share_per_layer.forEach((any, l) => assert.ok(any >= result.best_head_share_per_layer[l], `layer ${l}: ${any}`));
  for (const f of ["config.json", "model.safetensors", "tokenizer.json"]) assert.ok(fs.existsSync(path.join(out, f)), f);
  assert.match(r.stderr, /step 1500 +loss/);

  // the lesson's twins, through the loader: the top prediction follows the adjective
  for (const [adjective, referent] of [["tired", "animal"], ["wide", "street"]]) {
    const text = `the animal didn't cross the street because it was ${adjective} . it refers to the`;
    const m = cli(["model", "--dir", out, "--text", text, "--top", "3"]);
    assert.equal(m.status, 0, m.stderr);
    const ours = JSON.parse(m.stdout);
    assert.equal(ours.tokens.length, 17);
    const last = ours.next[ours.next.length - 1];
    assert.equal(last[0].token, referent, `${adjective}: ${JSON.stringify(last)}`);
    // PyTorch from the same folder: the same next-token probabilities
    const ids = [...new Set(ours.next.flat().map((n) => n.id))];
    const ref = torchReference(out, ours.token_ids, { top: 3, probsAt: ids });
    ours.next.forEach((options, t) => options.forEach((n) => {
      const p = ref.probs_at[t][ids.indexOf(n.id)];
      assert.ok(Math.abs(n.p - p) <= 1e-4 * Math.max(p, 1e-3), `position ${t} ${n.token}: ${n.p} vs ${p}`);
    }));
  }
});

test("train: a model trained without 1/sqrt(d) says so in config.json, opens unscaled, and PyTorch agrees", () => {
  const out = tmp("noscale");
  const r = cli(["train", "--seed", "1", "--steps", "300", "--no-scale", "--out", out, "--eval-every", "300"]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(fs.readFileSync(path.join(out, "config.json"), "utf8")).scale_attn_weights, false);
  const text = "the dog didn't cross the road because it was hungry . it refers to the";
  const m = cli(["model", "--dir", out, "--text", text, "--top", "3"]);
  assert.equal(m.status, 0, m.stderr);
  const ours = JSON.parse(m.stdout);
  assert.equal(ours.model.scale_attn_weights, false);
  const ids = [...new Set(ours.next.flat().map((n) => n.id))];
  const ref = torchReference(out, ours.token_ids, { top: 3, probsAt: ids });
  ours.next.forEach((options, t) => options.forEach((n) => {
    const p = ref.probs_at[t][ids.indexOf(n.id)];
    assert.ok(Math.abs(n.p - p) <= 1e-4 * Math.max(p, 1e-3), `position ${t} ${n.token}: ${n.p} vs ${p}`);
  }));
  // the same weights read with the division would give other probabilities: the flag is what torch used
  const scaledDir = tmp("noscale-as-scaled");
  for (const f of ["model.safetensors", "tokenizer.json"]) fs.copyFileSync(path.join(out, f), path.join(scaledDir, f));
  const config = JSON.parse(fs.readFileSync(path.join(out, "config.json"), "utf8"));
  delete config.scale_attn_weights;
  fs.writeFileSync(path.join(scaledDir, "config.json"), JSON.stringify(config));
  const scaled = JSON.parse(cli(["model", "--dir", scaledDir, "--text", text, "--top", "3"]).stdout);
  const last = (x) => x.next[x.next.length - 1][0].p;
  assert.ok(Math.abs(last(scaled) - last(ours)) > 1e-3, `scaled ${last(scaled)} vs unscaled ${last(ours)}`);
});

test("train --experiment scale: both arms from one seed at d_head 256, each with its loss curve and the step it reached 90%", LEARNING, () => {
  // Seed 1 (deterministic): with the division the held-out accuracy passes 90% at the 150th step's
  // evaluation; without it, it never does (the page's experiment test expects the same numbers).
  const r = cli(["train", "--experiment", "scale", "--steps", "150", "--seed", "1"]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.experiment, "scale");
  assert.equal(result.steps, 150);
  assert.deepEqual(result.arms.map((a) => a.scale), [true, false]);
  for (const arm of result.arms) {
    assert.equal(arm.head_dim, 256);
    assert.equal(arm.loss_windows.length, 10);
    assert.ok(arm.loss_windows.every((l) => Number.isFinite(l) && l > 0), JSON.stringify(arm.loss_windows));
    assert.ok(arm.final_accuracy >= 0 && arm.final_accuracy <= 1);
  }
  const [scaled, raw] = result.arms;
  assert.equal(scaled.reached_90_at, 150);
  assert.ok(scaled.final_accuracy >= 0.9, String(scaled.final_accuracy));
  assert.equal(raw.reached_90_at, null);
  assert.ok(raw.final_accuracy < 0.9, String(raw.final_accuracy));
  assert.deepEqual([scaled.layers, scaled.heads, scaled.d_model, scaled.lr], [raw.layers, raw.heads, raw.d_model, raw.lr]);
  assert.notEqual(scaled.loss_windows[0], raw.loss_windows[0], "the same batches, other scores: other losses");
  assert.match(r.stderr, /scores \/ sqrt\(d\): 90% held-out accuracy at step 150/);
  assert.match(r.stderr, /raw scores: did not reach 90% held-out accuracy in 150 steps/);
});

test("train: bad settings are refused with the setting's name (exit 2, nothing on stdout)", () => {
  const out = tmp("bad");
  const cases = [
    [["--heads", "0"], /heads/],
    [["--d-model", "30", "--heads", "4"], /d_model.*divisible/],
    [["--lr", "0"], /lr/],
    [["--lr", "-0.1"], /lr/],
    [["--lr", "nan"], /lr/],
    [["--lr", "fast"], /--lr must be a number/],
    [["--layers", "0"], /layers/],
    [["--steps", "0"], /--steps/],
    [["--heads", "-2"], /heads/],
    [["--d-model", "0"], /d_model/],
    [["--lr", "inf"], /lr/],
    [["--lr", "2"], /lr/],
    [["--batch", "0"], /batch/],
    [["--weight-decay", "-0.1"], /weight_decay/],
    [["--weight-decay", "nan"], /weight_decay/],
    [["--grad-clip", "nan"], /grad_clip/],
    [["--grad-clip", "-1"], /grad_clip/],
    [["--experiment", "temperature"], /--experiment must be 'scale'/],
    [["--experiment", "scale", "--lr", "0.1"], /--experiment takes --steps, --seed and --eval-every only/],
  ];
  for (const [extra, message] of cases) {
    const args = ["train", "--seed", "1", "--steps", "1", "--out", out, ...extra];
    const r = cli(args);
    assert.equal(r.status, 2, `${extra.join(" ")} accepted`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }
});

// The roles recipe (docs/training.md): two creatures, the active or the passive voice, an actor or a
// target adjective; attention only, 2 layers x 1 head. Its bar: the last-layer head's larger noun
// weight follows the adjective across held-out twin pairs (>= 90%) at >= 95% held-out accuracy, and
// zeroing that head takes the answer away. Seed 2 meets all of it (half of it on tiny weights: see
// noun_weight); seeds 1 and 3 meet the accuracy and the ablation but their head looks at the verb
// and "by", not the nouns (follows 0.49 and 0.50, noun weight 0.006 and 0.005), so the recipe is not
// shipped; ATTN_FULL=1 checks those two seeds' accuracy and ablation.
function trainRoles(seed, out) {
  const r = cli(["train", "--recipe", "roles", "--seed", String(seed), "--steps", "2000", "--eval-every", "2000", "--out", out]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  console.log(`roles seed ${seed}:`, JSON.stringify(result));
  assert.equal(result.recipe, "roles");
  assert.equal(result.corpus, "roles");
  assert.equal(result.attention_only, true);
  assert.equal(result.twin_pairs * 2, result.heldout_sentences);
  assert.ok(result.heldout_accuracy >= 0.95, `seed ${seed}: held-out accuracy ${result.heldout_accuracy}`);
  // the trainer's forward and the inference path (transformer_forward) agree
  assert.ok(Math.abs(result.accuracy_by_inference - result.heldout_accuracy) <= 2 / result.heldout_sentences,
    `${result.accuracy_by_inference} vs ${result.heldout_accuracy}`);
  // the one last-layer head carries the answer: without it the model is at chance or below
  assert.equal(result.accuracy_last_layer_head_ablated.length, 1);
  assert.ok(result.accuracy_last_layer_head_ablated[0] <= 0.6, `seed ${seed}: ablated ${result.accuracy_last_layer_head_ablated[0]}`);
  return result;
}

test("train --recipe roles: seed 2's last-layer head follows the adjective and carries the answer; the folder is a GPT-2 with zero MLPs", LEARNING, () => {
  const out = tmp("roles");
  const result = trainRoles(2, out);
  assert.ok(result.follow_share[0] >= 0.9, `head follows in ${result.follow_share[0]} of the twin pairs`);
  // ... half of its weight on the two nouns, on average: ~1 on the noun that acts after an actor
  // adjective, ~0 after a target adjective (it reads the verb, which carries the other noun from
  // layer 0), so half the "follows" compare hundredths (docs/training.md)
  assert.equal(result.noun_weight.length, 1);
  assert.ok(result.noun_weight[0] >= 0.4 && result.noun_weight[0] <= 0.6, `noun weight ${result.noun_weight[0]}`);
  // attention only: every MLP tensor of the saved GPT-2 folder is zero
  const st = readSafetensors(path.join(out, "model.safetensors"));
  const mlp = Object.keys(st.header).filter((k) => k.includes(".mlp."));
  assert.equal(mlp.length, 8);
  for (const name of mlp) {
    const [from, to] = st.header[name].data_offsets;
    assert.ok(st.data.subarray(from, to).every((b) => b === 0), `${name} is not zero`);
  }
  // a held-out twin pair through the loader: the top prediction follows the adjective; zeroing head
  // 1.0 lowers the referent's probability; PyTorch reads the folder to the same probabilities
  const base = "the fox was chased by the wolf because it was";
  for (const [adjective, referent] of [["hungry", "wolf"], ["slow", "fox"]]) {
    const text = `${base} ${adjective} . it refers to the ${adjective}`;
    const m = cli(["model", "--dir", out, "--text", text, "--top", "2"]);
    assert.equal(m.status, 0, m.stderr);
    const ours = JSON.parse(m.stdout);
    const last = ours.next.at(-1);
    assert.equal(last[0].token, referent, `${adjective}: ${JSON.stringify(last)}`);
    const a = cli(["model", "--dir", out, "--text", text, "--top", "2", "--ablate", "1.0"]);
    assert.equal(a.status, 0, a.stderr);
    const ablated = JSON.parse(a.stdout).intervened.next.at(-1).find((n) => n.token === referent);
    assert.ok(!ablated || ablated.p < last[0].p - 0.2, `${adjective}: ablated ${JSON.stringify(ablated)} vs ${last[0].p}`);
    const ids = last.map((n) => n.id);
    const ref = torchReference(out, ours.token_ids, { top: 2, probsAt: ids });
    last.forEach((n, i) => assert.ok(Math.abs(n.p - ref.probs_at.at(-1)[i]) <= 1e-4, `${n.token}: ${n.p} vs ${ref.probs_at.at(-1)[i]}`));
  }
});

test("train --recipe roles: seeds 1 and 3 learn it too, through the one last-layer head", { skip: process.env.ATTN_FULL !== "1" }, () => {
  for (const seed of [1, 3]) trainRoles(seed, tmp(`roles${seed}`));
});

test("train --recipe: an unknown recipe is refused by name", () => {
  const r = cli(["train", "--recipe", "nope", "--seed", "1", "--steps", "1", "--out", tmp("nope")]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--recipe must be default or roles/);
  assert.equal(r.stdout, "");
});
