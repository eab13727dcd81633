#!/usr/bin/python3
"""The reference for the interventions: GPT-2 as torch modules with named hook points (as
TransformerLens and NNsight place them), changed only by forward hooks, in float64.
Hook points per block: resid_pre (the stream entering it), scores (the masked scores before the
softmax), pattern (the weights), v (values, (H, T, hd)), z (head outputs, (T, H, hd), before c_proj);
ln_final's input is read for direct logit attribution.
Reads a request as JSON on stdin: {dir, ids, source_ids?, ablate [[l, h]], ablate_kind, cuts [{layer,
head (int or "all"), query, key}], patch_heads [[l, h]], patch_resid [[l, pos]], at, target, against}
and prints {log_prob, intervened_log_prob, attention [L][H][T][T] of the intervened run, attribution
{logit, offset, embeddings, heads, biases, mlps}, value_weighted, value_norms, rollout,
source_log_prob?, ablation_sweep [L][H]}. Not our code path: numpy reads the file, torch computes."""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_reference import read_state_dict


class HookPoint(nn.Identity):
    """A named place whose output a forward hook may read or replace."""


class Block(nn.Module):
    def __init__(self, sd, p, cfg):
        super().__init__()
        self.sd, self.p, self.cfg = sd, p, cfg
        self.resid_pre, self.scores, self.pattern, self.v, self.z = HookPoint(), HookPoint(), HookPoint(), HookPoint(), HookPoint()

    def forward(self, x):
        sd, p, C, H = self.sd, self.p, self.cfg["n_embd"], self.cfg["n_head"]
        eps, hd, T = self.cfg.get("layer_norm_epsilon", 1e-5), C // H, x.shape[0]
        x = self.resid_pre(x)
        h = F.layer_norm(x, (C,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps)
        qkv = h @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]
        q, k, v = (t.view(T, H, hd).transpose(0, 1) for t in qkv.split(C, dim=1))
        v = self.v(v)
        s = q @ k.transpose(1, 2)
        if self.cfg.get("scale_attn_weights", True):
            s = s / math.sqrt(hd)
        s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        w = self.pattern(torch.softmax(self.scores(s), dim=-1))
        z = self.z((w @ v).transpose(0, 1))  # (T, H, hd)
        self.attn_out = z.reshape(T, C) @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"]
        x = x + self.attn_out
        h = F.layer_norm(x, (C,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps)
        self.mlp_out = F.gelu(h @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"], approximate="tanh") @ \
            sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"]
        return x + self.mlp_out


class GPT2(nn.Module):
    def __init__(self, sd, cfg):
        super().__init__()
        self.sd, self.cfg = sd, cfg
        self.blocks = nn.ModuleList(Block(sd, f"h.{i}.", cfg) for i in range(cfg["n_layer"]))
        self.ln_final_in = HookPoint()

    def forward(self, ids):
        T, C = len(ids), self.cfg["n_embd"]
        x = self.sd["wte.weight"][torch.tensor(ids)] + self.sd["wpe.weight"][:T]
        for b in self.blocks:
            x = b(x)
        x = self.ln_final_in(x)
        x = F.layer_norm(x, (C,), self.sd["ln_f.weight"], self.sd["ln_f.bias"], self.cfg.get("layer_norm_epsilon", 1e-5))
        return x @ self.sd.get("lm_head.weight", self.sd["wte.weight"]).T


def run(model, ids, hooks):
    """The logits with the given (module, hook) pairs in place; the hooks are removed after."""
    handles = [m.register_forward_hook(h) for m, h in hooks]
    try:
        return model(ids)
    finally:
        for h in handles:
            h.remove()


def capture(module, store, key):
    def hook(_m, _inp, out):
        store[key] = out.clone()
    return module, hook


def intervention_hooks(model, req, source):
    hooks = []
    ablate = {}
    for l, h in req.get("ablate", []):
        ablate.setdefault(l, []).append(h)
    for l, heads in ablate.items():
        def zero_or_mean(_m, _inp, z, heads=heads):
            z = z.clone()
            for h in heads:
                if req.get("ablate_kind", "zero") == "zero":
                    z[:, h] = 0
                else:  # the mean over positions 0 … i at each query i
                    z[:, h] = torch.cumsum(z[:, h], dim=0) / torch.arange(1, z.shape[0] + 1, dtype=z.dtype)[:, None]
            return z
        hooks.append((model.blocks[l].z, zero_or_mean))
    for cut in req.get("cuts", []):
        def hide(_m, _inp, s, cut=cut):
            s = s.clone()
            heads = range(s.shape[0]) if cut["head"] == "all" else [cut["head"]]
            for h in heads:
                s[h, cut["query"], cut["key"]] = float("-inf")
            return s
        hooks.append((model.blocks[cut["layer"]].scores, hide))
    for l, h in req.get("patch_heads", []):
        def from_source(_m, _inp, z, l=l, h=h):
            z = z.clone()
            z[:, h] = source[("z", l)][:, h]
            return z
        hooks.append((model.blocks[l].z, from_source))
    for l, pos in req.get("patch_resid", []):
        def stream_from_source(_m, _inp, x, l=l, pos=pos):
            x = x.clone()
            x[pos] = source[("resid_pre", l)][pos]
            return x
        hooks.append((model.blocks[l].resid_pre, stream_from_source))
    return hooks


def log_prob(logits, at, target):
    return float(torch.log_softmax(logits[at], dim=-1)[target])


def main():
    req = json.load(sys.stdin)
    with open(os.path.join(req["dir"], "config.json")) as f:
        cfg = json.load(f)
    sd = {k: torch.as_tensor(v).double() for k, v in read_state_dict(os.path.join(req["dir"], "model.safetensors")).items()}
    torch.set_grad_enabled(False)
    model = GPT2(sd, cfg)
    L, H, C = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
    hd = C // H
    ids, at, target = req["ids"], req["at"], req["target"]
    out = {}
    base_logits = run(model, ids, [])
    out["log_prob"] = log_prob(base_logits, at, target)
    source = {}
    if req.get("source_ids"):
        grab = [capture(model.blocks[l].z, source, ("z", l)) for l in range(L)] + \
               [capture(model.blocks[l].resid_pre, source, ("resid_pre", l)) for l in range(L)]
        out["source_log_prob"] = log_prob(run(model, req["source_ids"], grab), at, target)
    seen = {}
    grab = [capture(model.blocks[l].pattern, seen, ("pattern", l)) for l in range(L)] + \
           [capture(model.blocks[l].v, seen, ("v", l)) for l in range(L)] + \
           [capture(model.blocks[l].z, seen, ("z", l)) for l in range(L)] + [capture(model.ln_final_in, seen, "final")]
    logits = run(model, ids, intervention_hooks(model, req, source) + grab)
    out["intervened_log_prob"] = log_prob(logits, at, target)
    out["attention"] = [seen[("pattern", l)].tolist() for l in range(L)]

    # direct logit attribution: ln_f's scale frozen from the run's final stream at `at`
    u = sd.get("lm_head.weight", sd["wte.weight"])[target].clone()
    if req.get("against", -1) >= 0:
        u = u - sd.get("lm_head.weight", sd["wte.weight"])[req["against"]]
    x = seen["final"][at]
    rstd = 1 / torch.sqrt(x.var(unbiased=False) + cfg.get("layer_norm_epsilon", 1e-5))
    g = rstd * sd["ln_f.weight"] * u

    def through(part):
        return float(((part - part.mean()) * g).sum())

    T = len(ids)
    embed = sd["wte.weight"][ids[at]] + sd["wpe.weight"][at]
    heads = [[through(seen[("z", l)][at, h] @ sd[f"h.{l}.attn.c_proj.weight"][h * hd:(h + 1) * hd]) for h in range(H)] for l in range(L)]
    out["attribution"] = {"logit": float(F.layer_norm(x, (C,), sd["ln_f.weight"], sd["ln_f.bias"], cfg.get("layer_norm_epsilon", 1e-5)) @ u),
                          "offset": float(sd["ln_f.bias"] @ u), "embeddings": through(embed), "heads": heads,
                          "biases": [through(sd[f"h.{l}.attn.c_proj.bias"]) for l in range(L)],
                          "mlps": [through(model.blocks[l].mlp_out[at]) for l in range(L)]}
    # value-weighted norms and rollout of the run
    norms = [[(seen[("v", l)][h] @ sd[f"h.{l}.attn.c_proj.weight"][h * hd:(h + 1) * hd]).norm(dim=-1) for h in range(H)] for l in range(L)]
    out["value_norms"] = [[n.tolist() for n in layer] for layer in norms]
    out["value_weighted"] = [[(seen[("pattern", l)][h] * norms[l][h][None, :]).tolist() for h in range(H)] for l in range(L)]
    rollout, r = [], None
    for l in range(L):
        a = 0.5 * seen[("pattern", l)].mean(0) + 0.5 * torch.eye(T, dtype=torch.float64)
        a = a / a.sum(-1, keepdim=True)
        r = a if r is None else a @ r
        rollout.append(r.tolist())
    out["rollout"] = rollout
    if req.get("sweep_ablation"):
        sweep = []
        for l in range(L):
            row = []
            for h in range(H):
                one = {"ablate": [[l, h]], "ablate_kind": req.get("ablate_kind", "zero")}
                row.append(log_prob(run(model, ids, intervention_hooks(model, one, {})), at, target) - out["log_prob"])
            sweep.append(row)
        out["ablation_sweep"] = sweep
    print(json.dumps(out))


if __name__ == "__main__":
    main()
