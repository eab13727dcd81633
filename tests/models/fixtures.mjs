// Model folders for the tests: random GPT-2 models written by make_model.py, the PyTorch reference,
// and hostile variants of a good folder (each breaks one thing). Not a test itself.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = "/usr/bin/python3";

// Every folder the helpers below make, removed when the test file's process ends.
const made = [];
function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
process.on("exit", () => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function python(script, args, input) {
  const r = spawnSync(PYTHON, [path.join(ROOT, "tests/models", script), ...args], { encoding: "utf8", maxBuffer: 1 << 30, input });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A random model folder; options as make_model.py's flags ({layers, heads, embd, dtype, prefix, ...}). */
export function makeModel(options = {}) {
  const dir = tempDir("attn-model-");
  const args = ["--out", dir];
  for (const [key, value] of Object.entries(options)) {
    const flag = "--" + key.replace(/_/g, "-");
    if (value === true) args.push(flag);
    else if (value !== false && value !== undefined) args.push(flag, String(value));
  }
  python("make_model.py", args);
  return dir;
}

/** PyTorch's attention [layer][head][query][key], top-K next tokens and the probabilities of `probsAt` ids. */
export function torchReference(dir, ids, { top = 5, probsAt = [] } = {}) {
  return JSON.parse(python("torch_reference.py", ["--dir", dir, "--ids", ids.join(","), "--top", String(top),
    "--probs-at", probsAt.join(",")]));
}

/** torch_interventions.py's answer to a request ({dir, ids, ablate, cuts, ...}: see that file). */
export function torchInterventions(request) {
  return JSON.parse(python("torch_interventions.py", [], JSON.stringify(request)));
}

/** The safetensors file as {header (object), headerLength, data (Buffer)}. */
export function readSafetensors(file) {
  const bytes = fs.readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString("utf8")), data: bytes.subarray(8 + n) };
}

export function writeSafetensors(file, header, data) {
  const text = Buffer.from(JSON.stringify(header), "utf8");
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  fs.writeFileSync(file, Buffer.concat([length, text, data]));
}

/** A copy of a model folder with `edit(dir)` applied to the copy. */
export function variant(dir, edit) {
  const copy = tempDir("attn-bad-");
  for (const name of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, name), path.join(copy, name));
  edit(copy);
  return copy;
}

const editJson = (file, change) => { const j = JSON.parse(fs.readFileSync(file, "utf8")); change(j); fs.writeFileSync(file, JSON.stringify(j)); };
const st = (dir) => path.join(dir, "model.safetensors");

/** Hostile folders made from a good one (tied, F32, no prefix, vocab.json + merges.txt): each
 *  [name, dir, what the message must contain]. */
export function badModels(good) {
  const cases = [
    ["truncated safetensors", (d) => { const b = fs.readFileSync(st(d)); fs.writeFileSync(st(d), b.subarray(0, b.length - 100)); }, "model.safetensors"],
    ["header length past the end", (d) => { const b = fs.readFileSync(st(d)); b.writeBigUInt64LE(BigInt(b.length + 10), 0); fs.writeFileSync(st(d), b); }, "model.safetensors"],
    ["100 MB header", (d) => { const b = fs.readFileSync(st(d)); b.writeBigUInt64LE(100n << 20n, 0); fs.writeFileSync(st(d), b); }, "model.safetensors"],
    ["header not JSON", (d) => { const b = fs.readFileSync(st(d)); b.write("{not json", 8); fs.writeFileSync(st(d), b); }, "model.safetensors"],
    ["offsets outside the data", (d) => { const f = readSafetensors(st(d)); f.header["wpe.weight"].data_offsets[1] += 1 << 30; writeSafetensors(st(d), f.header, f.data); }, "model.safetensors"],
    ["overlapping tensors", (d) => { const f = readSafetensors(st(d)); const e = f.header["wpe.weight"]; e.data_offsets = [e.data_offsets[0] - 4, e.data_offsets[1] - 4]; writeSafetensors(st(d), f.header, f.data); }, "model.safetensors"],
    ["shape does not match its bytes", (d) => { const f = readSafetensors(st(d)); f.header["ln_f.weight"].shape = [3]; writeSafetensors(st(d), f.header, f.data); }, "ln_f.weight"],
    ["shape does not match the config", (d) => editJson(path.join(d, "config.json"), (c) => { c.n_embd *= 2; c.n_head = 1; }), "model.safetensors"],
    ["missing tensor", (d) => { const f = readSafetensors(st(d)); const e = f.header["ln_f.bias"]; delete f.header["ln_f.bias"]; writeSafetensors(st(d), f.header, f.data.subarray(0, e.data_offsets[0])); }, "ln_f.bias"],
    ["unknown dtype", (d) => { const f = readSafetensors(st(d)); f.header["ln_f.bias"].dtype = "I64"; f.header["ln_f.bias"].shape = [f.header["ln_f.bias"].shape[0] / 2]; writeSafetensors(st(d), f.header, f.data); }, "I64"],
    ["n_embd not divisible by n_head", (d) => editJson(path.join(d, "config.json"), (c) => { c.n_head = 3; }), "config.json"],
    ["another model type", (d) => editJson(path.join(d, "config.json"), (c) => { c.model_type = "falcon"; }), "falcon"],
    ["malformed merges line", (d) => fs.appendFileSync(path.join(d, "merges.txt"), "onlyonepart\n"), "merges.txt"],
    ["vocab.json not an object", (d) => fs.writeFileSync(path.join(d, "vocab.json"), "[1, 2, 3]"), "vocab.json"],
    ["no config.json", (d) => fs.rmSync(path.join(d, "config.json")), "config.json"],
    ["no tokenizer", (d) => { fs.rmSync(path.join(d, "vocab.json")); fs.rmSync(path.join(d, "merges.txt")); }, "tokenizer"],
  ];
  return cases.map(([name, edit, mention]) => [name, variant(good, edit), mention]);
}

// [Llama-style families] ---------------------------------------------------------------------------

// make_*_model.py's command-line flags from an options object ({d_model: 36, untied: true} → --d-model 36 --untied).
export function flags(options) {
  const args = [];
  for (const [key, value] of Object.entries(options)) {
    const flag = "--" + key.replace(/_/g, "-");
    if (value === true) args.push(flag);
    else if (value !== false && value !== undefined) args.push(flag, String(value));
  }
  return args;
}

/** A random model folder of a Llama-style family in its Hugging Face layout; options as
 *  make_family_model.py's flags ({family, layers, heads, kv_heads, head_dim, d_model, dtype, window,
 *  rope, rope_form, shards, tokenizer, ...}). */
export function makeFamilyModel(options = {}) {
  const dir = tempDir("attn-family-");
  python("make_family_model.py", ["--out", dir, ...flags(options)]);
  return dir;
}

/** torch_family_reference.py on a folder: {model (what the CLI's model block should say), attention
 *  [layer][query head][i][j], next [t] top-K {id, p}, probs_at [t][k] of the `probsAt` ids}. */
export function torchFamilyReference(dir, ids, { top = 5, probsAt = [] } = {}) {
  return JSON.parse(python("torch_family_reference.py", ["--dir", dir, "--ids", ids.join(","), "--top", String(top),
    "--probs-at", probsAt.join(",")]));
}

// [Encoders] ---------------------------------------------------------------------------------------

/** A random encoder folder (bert, distilbert, roberta) in its Hugging Face layout; options as
 *  make_encoder_model.py's flags ({family, dtype, layers, heads, d_model, d_ff, tokenizer, vocab_txt,
 *  prefix, untied, no_mask, ...}). */
export function makeEncoderModel(options = {}) {
  const dir = tempDir("attn-encoder-");
  python("make_encoder_model.py", ["--out", dir, ...flags(options)]);
  return dir;
}

/** torch_encoder_reference.py on many requests at once (one torch start): for each {ids, pad?, top?,
 *  probs_at?, ablate? "L.H,...", ablate_kind?, cut? "L.H:Q-K,..."} its {attention [layer][head][i][j],
 *  masked_lm, next [t] top K {id, p}, probs_at [t][k]}. */
export function torchEncoderReference(dir, requests) {
  return JSON.parse(python("torch_encoder_reference.py", ["--dir", dir], JSON.stringify(requests)));
}

const INDEX = "model.safetensors.index.json";
const readIndex = (dir) => JSON.parse(fs.readFileSync(path.join(dir, INDEX), "utf8"));
const writeIndex = (dir, index) => fs.writeFileSync(path.join(dir, INDEX), JSON.stringify(index, null, 2));
/** The file of a sharded or single-file folder that holds `name`. */
const fileOf = (dir, name) => fs.existsSync(path.join(dir, INDEX)) ? readIndex(dir).weight_map[name] : "model.safetensors";

/** The tensors of a safetensors file as [name, entry, bytes] in data order (+ its __metadata__). */
function tensorsOf(file) {
  const { header, data } = readSafetensors(file);
  const entries = Object.entries(header).filter(([n]) => n !== "__metadata__").sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  return { metadata: header.__metadata__, tensors: entries.map(([n, e]) => [n, e, data.subarray(e.data_offsets[0], e.data_offsets[1])]) };
}
/** Writes tensors back contiguously (offsets recomputed), so that only the intended thing is wrong. */
function rewrite(file, metadata, tensors) {
  const header = {};
  let offset = 0;
  for (const [name, entry, bytes] of tensors) {
    header[name] = { ...entry, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  if (metadata) header.__metadata__ = metadata;
  writeSafetensors(file, header, Buffer.concat(tensors.map((t) => t[2])));
}
function editTensors(dir, name, change) {
  const file = path.join(dir, fileOf(dir, name));
  const { metadata, tensors } = tensorsOf(file);
  rewrite(file, metadata, change(tensors));
}
const editConfig = (dir, change) => editJson(path.join(dir, "config.json"), change);

/** Hostile folders made from a good sharded Llama folder (2 shards, untied, old rope form, heads 4,
 *  kv_heads 2) and, for the Qwen-only fields, a good Qwen 2 folder (`qwen`, optional): each {name, dir,
 *  file: the file the message must name (or a list: any of them), word: what it must mention}. Each
 *  breaks ONE thing (a family switch only where the tensor names stay right). */
export function badFamilyModels(good, qwen = null) {
  const shard1 = "model-00001-of-00002.safetensors", shard2 = "model-00002-of-00002.safetensors";
  const shards = [shard1, shard2, INDEX];
  const k0 = "model.layers.0.self_attn.k_proj.weight", up1 = "model.layers.1.mlp.up_proj.weight";
  const norm = "model.norm.weight", ghost = "model.layers.7.self_attn.q_proj.weight";
  const cases = [
    ["unknown model_type", (d) => editConfig(d, (c) => { c.model_type = "falcon"; }), "config.json", "falcon"],
    ["no model_type", (d) => editConfig(d, (c) => { delete c.model_type; }), "config.json", "model_type"],
    ["mixture of experts (num_local_experts)", (d) => editConfig(d, (c) => { c.num_local_experts = 8; c.num_experts_per_tok = 2; }), "config.json", "experts"],
    ["rope_scaling longrope", (d) => editConfig(d, (c) => { c.rope_scaling = { rope_type: "longrope", short_factor: [1], long_factor: [1] }; }), "config.json", "longrope"],
    ["rope_scaling dynamic (old \"type\" key)", (d) => editConfig(d, (c) => { c.rope_scaling = { type: "dynamic", factor: 2.0 }; }), "config.json", "dynamic"],
    ["rope_parameters dynamic", (d) => editConfig(d, (c) => { delete c.rope_theta; delete c.rope_scaling; c.rope_parameters = { rope_type: "dynamic", rope_theta: 10000, factor: 2.0 }; }), "config.json", "dynamic"],
    ["partial_rotary_factor 0.5", (d) => editConfig(d, (c) => { c.partial_rotary_factor = 0.5; }), "config.json", "partial_rotary_factor"],
    ["alibi", (d) => editConfig(d, (c) => { c.alibi = true; }), "config.json", "alibi"],
    ["heads not divisible by kv_heads", (d) => editConfig(d, (c) => { c.num_key_value_heads = 3; }), "config.json", "num_key_value_heads"],
    ["head_dim 0", (d) => editConfig(d, (c) => { c.head_dim = 0; }), "config.json", "head_dim"],
    ["head_dim huge", (d) => editConfig(d, (c) => { c.head_dim = 1 << 20; }), "config.json", "head_dim"],
    ["rms_norm_eps negative", (d) => editConfig(d, (c) => { c.rms_norm_eps = -1e-6; }), "config.json", "rms_norm_eps"],
    ["rms_norm_eps NaN (not JSON)", (d) => { const f = path.join(d, "config.json"); fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(/"rms_norm_eps": [^,\n]+/, '"rms_norm_eps": NaN')); }, "config.json", "config.json"],
    ["rms_norm_eps a string", (d) => editConfig(d, (c) => { c.rms_norm_eps = "1e-6"; }), "config.json", "rms_norm_eps"],
    ["sliding_window 0", (d) => editConfig(d, (c) => { c.model_type = "mistral"; c.sliding_window = 0; }), "config.json", "sliding_window"],
    ["sliding_window negative", (d) => editConfig(d, (c) => { c.model_type = "mistral"; c.sliding_window = -4; }), "config.json", "sliding_window"],
    ["hidden_act relu", (d) => editConfig(d, (c) => { c.hidden_act = "relu"; }), "config.json", "relu"],
    ["rope_theta 0", (d) => editConfig(d, (c) => { c.rope_theta = 0; }), "config.json", "rope_theta"],
    ["gemma3 without text_config", (d) => editConfig(d, (c) => { c.model_type = "gemma3"; }), "config.json", "text_config"],
    ["tensor of the wrong shape", (d) => editTensors(d, k0, (ts) => ts.map(([n, e, b]) => [n, n === k0 ? { ...e, shape: [...e.shape].reverse() } : e, b])), fileOf(good, k0), k0],
    ["missing tensor", (d) => { editTensors(d, up1, (ts) => ts.filter(([n]) => n !== up1)); const i = readIndex(d); delete i.weight_map[up1]; writeIndex(d, i); }, shards, up1],
    ["a tensor in two shards", (d) => {
      const home = fileOf(d, norm), other = home === shard1 ? shard2 : shard1;
      const copy = tensorsOf(path.join(d, home)).tensors.find(([n]) => n === norm);
      const { metadata, tensors } = tensorsOf(path.join(d, other));
      rewrite(path.join(d, other), metadata, [...tensors, copy]);
    }, shards, norm],
    ["missing shard file", (d) => fs.rmSync(path.join(d, shard2)), shards, shard2],
    ["index names a tensor no shard has", (d) => { const i = readIndex(d); i.weight_map[ghost] = shard1; writeIndex(d, i); }, shards, ghost],
    ["index names a shard that does not exist", (d) => { const i = readIndex(d); i.weight_map[norm] = "model-00003-of-00002.safetensors"; writeIndex(d, i); }, shards, "model-00003-of-00002.safetensors"],
    ["index not JSON", (d) => fs.writeFileSync(path.join(d, INDEX), "{\"weight_map\": "), INDEX, INDEX],
  ];
  const qwenCases = [
    ["mixture of experts (num_experts)", (d) => editConfig(d, (c) => { c.num_experts = 4; c.num_experts_per_tok = 2; }), "config.json", "experts"],
    ["Qwen window negative", (d) => editConfig(d, (c) => { c.use_sliding_window = true; c.sliding_window = -4; c.max_window_layers = 0; }), "config.json", "sliding_window"],
    ["layer_types of the wrong length", (d) => editConfig(d, (c) => { c.use_sliding_window = true; c.sliding_window = 4; c.layer_types = ["sliding_attention"]; }), "config.json", "layer_types"],
    ["layer_types chunked_attention", (d) => editConfig(d, (c) => { c.layer_types = c.layer_types ?? Array(c.num_hidden_layers).fill("full_attention"); c.layer_types[0] = "chunked_attention"; }), "config.json", "chunked_attention"],
  ];
  return [...cases.map(([name, edit, file, word]) => ({ name, dir: variant(good, edit), file, word })),
    ...(qwen ? qwenCases.map(([name, edit, file, word]) => ({ name, dir: variant(qwen, edit), file, word })) : [])];
}
