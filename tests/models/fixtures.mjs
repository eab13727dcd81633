// Model folders for the tests: random GPT-2 models written by make_model.py, the PyTorch reference,
// and hostile variants of a good folder (each breaks one thing). Not a test itself.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = "/usr/bin/python3";

function python(script, args) {
  const r = spawnSync(PYTHON, [path.join(ROOT, "tests/models", script), ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A random model folder; options as make_model.py's flags ({layers, heads, embd, dtype, prefix, ...}). */
export function makeModel(options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-model-"));
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
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "attn-bad-"));
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
