#!/usr/bin/python3
"""The reference for the model forward: GPT-2 written out in a few lines of PyTorch from a model
folder's state dict (read here from model.safetensors byte by byte), run on given token ids.
Prints {attention [layer][head][query][key], next [position] -> top K {id, p}, probs_at}.
Not our code path in any way: numpy reads the file, torch computes."""
import argparse
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from torch_family_reference import read_safetensors


def read_state_dict(path):
    """GPT-2's tensors in float32 by their names without the "transformer." prefix."""
    return {name.removeprefix("transformer."): t for name, t in read_safetensors(path, np.float32).items()}


def gpt2(sd, cfg, ids):
    """The forward of a state dict on token ids: (weights per layer as (H, T, T) tensors, logits (T, V)).
    Differentiable (the training-step check uses it too). As Hugging Face's GPT2Attention, the scores
    are divided by sqrt(head width) unless config.json says "scale_attn_weights": false."""
    C, H, eps = cfg["n_embd"], cfg["n_head"], cfg.get("layer_norm_epsilon", 1e-5)
    scale = cfg.get("scale_attn_weights", True)
    hd = C // H
    T = len(ids)
    ids_t = torch.tensor(ids)
    x = sd["wte.weight"][ids_t] + sd["wpe.weight"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    weights = []
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps)
        qkv = h @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]
        q, k, v = (t.view(T, H, hd).transpose(0, 1) for t in qkv.split(C, dim=1))  # (H, T, hd)
        scores = q @ k.transpose(1, 2)
        if scale:
            scores = scores / math.sqrt(hd)
        w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        weights.append(w)
        y = (w @ v).transpose(0, 1).reshape(T, C)
        x = x + y @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps)
        h = F.gelu(h @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (C,), sd["ln_f.weight"], sd["ln_f.bias"], eps)
    head = sd.get("lm_head.weight", sd["wte.weight"])
    return weights, x @ head.T


def forward(sd, cfg, ids):
    weights, logits = gpt2(sd, cfg, ids)
    return [w.tolist() for w in weights], torch.softmax(logits, dim=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--probs-at", default="", help="comma-separated ids whose probability to print at every position")
    a = ap.parse_args()
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    sd = read_state_dict(os.path.join(a.dir, "model.safetensors"))
    ids = [int(t) for t in a.ids.split(",") if t]
    torch.set_grad_enabled(False)
    attention, probs = forward(sd, cfg, ids)
    top = torch.topk(probs, a.top, dim=-1)
    nxt = [[{"id": int(i), "p": float(p)} for p, i in zip(top.values[t], top.indices[t])] for t in range(len(ids))]
    want = [int(t) for t in a.probs_at.split(",") if t]
    print(json.dumps({"attention": attention, "next": nxt,
                      "probs_at": [[float(probs[t, i]) for i in want] for t in range(len(ids))]}))


if __name__ == "__main__":
    main()
