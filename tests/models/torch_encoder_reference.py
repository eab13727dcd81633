#!/usr/bin/python3
"""The reference for the encoders' forward (bert, distilbert, roberta), written out in PyTorch from a
model folder's state dict (model.safetensors, read byte by byte by torch_family_reference.py's reader)
and config.json, on given token ids, with an attention mask and interventions; every 16-bit weight is
widened and the maths runs in float64.
Prints {attention [layer][head][i][j], masked_lm: bool, next [t] -> top K {id, p}, probs_at [t][...]}, or
a list of them for a JSON list of requests on stdin (one torch start for many runs).
Not our code path in any way: numpy reads the files, torch computes. It trusts the folder.

Conventions, each from Hugging Face transformers' own files (models/bert/modeling_bert.py,
models/distilbert/modeling_distilbert.py, models/roberta/modeling_roberta.py, read 2026-12):
  embeddings   word + token type (type 0 unless given) + position, then LayerNorm(eps); RoBERTa's
               position ids count the tokens that are not padding_idx (= pad_token_id) from
               padding_idx + 1, a padding token taking padding_idx itself
               (create_position_ids_from_input_ids); DistilBERT has no token types, its positions from 0
               (a sinusoidal table is saved in the file like a learned one), its LayerNorms' eps 1e-12.
  attention    q, k, v nn.Linear (y = x W^T + b), per head scores q k^T / sqrt(head_dim) (DistilBERT divides q
               first: the same up to rounding), plus the extended attention mask (1 - mask) * finfo.min over
               the keys (DistilBERT: masked_fill with finfo.min), softmax over the keys, weights . v, heads
               joined, the output dense.
  block        post-LN: x = LayerNorm(x + attn_out(x)); x = LayerNorm(x + down(gelu(up(x)))) (gelu = erf).
  MLM head     BertLMPredictionHead: transform (dense, hidden_act, LayerNorm) then the decoder (tied to the
               word embeddings unless the file has its own) + cls.predictions.bias; RobertaLMHead: dense,
               gelu, layer_norm, decoder + lm_head.bias; DistilBertForMaskedLM: vocab_transform, activation,
               vocab_layer_norm, vocab_projector (+ its bias).
Interventions (the CLI's --ablate / --cut): a zero-ablated head's output (weights . v, before the output
dense) is 0; a mean-ablated one is its mean over the positions that are not padding; a cut link's score
is -inf before the softmax."""
import argparse
import json
import os
import sys

import torch

from torch_family_reference import read_safetensors

PREFIX = {"bert": "bert.", "distilbert": "distilbert.", "roberta": "roberta."}


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / 2.0 ** 0.5))


def load(folder):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    raw = read_safetensors(os.path.join(folder, "model.safetensors"))
    family = cfg["model_type"]
    sd = {}
    for name, t in raw.items():
        if name.startswith(PREFIX[family]):
            name = name[len(PREFIX[family]):]
        if name.endswith(".gamma"):
            name = name[:-6] + ".weight"
        if name.endswith(".beta"):
            name = name[:-5] + ".bias"
        sd[name] = t
    return cfg, sd


def names(family, i):
    if family == "distilbert":
        p = f"transformer.layer.{i}."
        return [p + n for n in ("attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
                                "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm")]
    p = f"encoder.layer.{i}."
    return [p + n for n in ("attention.self.query", "attention.self.key", "attention.self.value",
                            "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                            "output.dense", "output.LayerNorm")]


def forward(cfg, sd, ids, mask, types=None, ablate=(), ablate_kind="zero", cuts=()):
    family = cfg["model_type"]
    distil = family == "distilbert"
    C = cfg["dim"] if distil else cfg["hidden_size"]
    H = cfg["n_heads"] if distil else cfg["num_attention_heads"]
    L = cfg["n_layers"] if distil else cfg["num_hidden_layers"]
    eps = 1e-12 if distil else cfg.get("layer_norm_eps", 1e-12)
    hd = C // H
    T = len(ids)
    ids_t = torch.tensor(ids)
    mask_t = torch.tensor(mask, dtype=torch.float64)

    def lin(x, name):
        return x @ sd[name + ".weight"].T + sd[name + ".bias"]

    # embeddings
    if family == "roberta":
        pad = cfg.get("pad_token_id", 1)
        not_pad = (ids_t != pad).long()
        positions = torch.cumsum(not_pad, 0) * not_pad + pad
    else:
        positions = torch.arange(T)
    x = sd["embeddings.word_embeddings.weight"][ids_t]
    if not distil:
        x = x + sd["embeddings.token_type_embeddings.weight"][torch.tensor(types or [0] * T)]
    x = x + sd["embeddings.position_embeddings.weight"][positions]
    x = layer_norm(x, sd["embeddings.LayerNorm.weight"], sd["embeddings.LayerNorm.bias"], eps)

    # the extended attention mask: a large negative number on the keys with mask 0, for every query
    extended = (1.0 - mask_t)[None, None, :] * torch.finfo(torch.float64).min
    attention = []
    for i in range(L):
        q_n, k_n, v_n, o_n, n1, up, down, n2 = names(family, i)
        q = lin(x, q_n).view(T, H, hd).transpose(0, 1)
        k = lin(x, k_n).view(T, H, hd).transpose(0, 1)
        v = lin(x, v_n).view(T, H, hd).transpose(0, 1)
        scores = q @ k.transpose(1, 2) / hd ** 0.5 + extended
        for (layer, head, qi, kj) in cuts:
            if layer == i:
                for h in (range(H) if head < 0 else [head]):
                    scores[h, qi, kj] = float("-inf")
        weights = torch.softmax(scores, dim=-1)
        attention.append(weights.tolist())
        ctx = weights @ v  # (H, T, hd)
        for (layer, head) in ablate:
            if layer == i:
                if ablate_kind == "zero":
                    ctx[head] = 0
                else:
                    real = mask_t > 0
                    ctx[head] = ctx[head][real].mean(0, keepdim=True).expand(T, hd)
        ctx = ctx.transpose(0, 1).reshape(T, C)
        x = layer_norm(x + lin(ctx, o_n), sd[n1 + ".weight"], sd[n1 + ".bias"], eps)
        x = layer_norm(x + lin(gelu(lin(x, up)), down), sd[n2 + ".weight"], sd[n2 + ".bias"], eps)

    # the masked-LM head, when the file has one
    if family == "bert":
        dense, ln, decoder, bias = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                    "cls.predictions.decoder.weight", "cls.predictions.bias")
    elif distil:
        dense, ln, decoder, bias = "vocab_transform", "vocab_layer_norm", "vocab_projector.weight", "vocab_projector.bias"
    else:
        dense, ln, decoder, bias = "lm_head.dense", "lm_head.layer_norm", "lm_head.decoder.weight", "lm_head.bias"
    if dense + ".weight" not in sd:
        return attention, None
    h = layer_norm(gelu(lin(x, dense)), sd[ln + ".weight"], sd[ln + ".bias"], eps)
    unembed = sd[decoder] if decoder in sd else sd["embeddings.word_embeddings.weight"]
    logits = h @ unembed.T + sd[bias]
    return attention, torch.softmax(logits, dim=-1)


def run(cfg, sd, r):
    """One request {ids, pad?, types?, top?, probs_at?, ablate? "L.H,...", ablate_kind?, cut? "L.H:Q-K,..."}."""
    ids = [int(t) for t in r["ids"]]
    pad = int(r.get("pad", 0))
    mask = [1] * (len(ids) - pad) + [0] * pad
    ablate = [tuple(int(p) for p in item.split(".")) for item in r.get("ablate", "").split(",") if item]
    cuts = []
    for item in filter(None, r.get("cut", "").split(",")):
        head_part, link = item.split(":")
        layer, head = head_part.split(".")
        qi, kj = link.split("-")
        cuts.append((int(layer), -1 if head == "*" else int(head), int(qi), int(kj)))
    with torch.no_grad():
        attention, probs = forward(cfg, sd, ids, mask, r.get("types"), ablate, r.get("ablate_kind", "zero"), cuts)
    out = {"attention": attention, "masked_lm": probs is not None}
    if probs is not None:
        wanted = [int(t) for t in r.get("probs_at", [])]
        top = torch.topk(probs, int(r.get("top", 5)), dim=-1)
        out["next"] = [[{"id": int(i), "p": float(p)} for p, i in zip(ps, is_)] for ps, is_ in
                       zip(top.values.tolist(), top.indices.tolist())]
        out["probs_at"] = [[float(probs[t, w]) for w in wanted] for t in range(len(ids))]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ids", default="", help="comma-separated token ids (else a JSON list of requests on stdin)")
    ap.add_argument("--pad", type=int, default=0, help="the last PAD ids have attention mask 0")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--probs-at", default="", help="comma-separated ids whose probability to print at every position")
    ap.add_argument("--ablate", default="", help="LAYER.HEAD,... heads whose output is replaced")
    ap.add_argument("--ablate-kind", default="zero", choices=["zero", "mean"])
    ap.add_argument("--cut", default="", help="LAYER.HEAD:QUERY-KEY,... (HEAD * for every head)")
    a = ap.parse_args()
    cfg, sd = load(a.dir)
    if not a.ids:
        print(json.dumps([run(cfg, sd, r) for r in json.load(sys.stdin)]))
        return
    request = {"ids": a.ids.split(","), "pad": a.pad, "top": a.top, "ablate": a.ablate, "ablate_kind": a.ablate_kind,
               "cut": a.cut, "probs_at": [t for t in a.probs_at.split(",") if t]}
    print(json.dumps(run(cfg, sd, request)))


if __name__ == "__main__":
    main()
