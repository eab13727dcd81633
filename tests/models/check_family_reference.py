#!/usr/bin/python3
"""Checks torch_family_reference.py without transformers: a second forward written from the formulae
in plain numpy (per-position loops, RoPE as explicit 2-D turns of the pairs (i, i + d/2), Meta's
scalar llama3 frequency loop), and invariances that a wrong convention breaks (both config forms,
"type" vs "rope_type", GQA as repeated K/V heads, a window >= T vs none, W = 1, shards, the Gemma 3
wrapper under both namings). Prints one line per check with the largest difference; exit 1 on failure.
A program, not a unit test: run it after changing the reference (about a minute on 2 cores)."""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_family_reference as ref  # noqa: E402

torch.set_grad_enabled(False)
TMP = tempfile.mkdtemp(prefix="attn-family-check-")
IDS = [1, 791, 10065, 3287, 956, 5425, 279, 8761, 1606, 433, 574, 19781, 13, 578, 8761]
failures = []


def make(name, **options):
    out = os.path.join(TMP, name)
    args = ["/usr/bin/python3", os.path.join(HERE, "make_family_model.py"), "--out", out]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return out


def run(folder, ids=IDS):
    cfg, sd, _ = ref.load(folder)
    weights, logits = ref.forward(cfg, sd, ids)
    return torch.stack([w for w in weights]).numpy(), torch.log_softmax(logits, -1).numpy()


def report(name, difference, tolerance, want_small=True):
    ok = difference <= tolerance if want_small else difference > tolerance
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {difference:.2e} ({'<=' if want_small else '>'} {tolerance:g})")
    if not ok:
        failures.append(name)


def same(name, a, b, tolerance=1e-12):
    report(name, max(np.abs(a[0] - b[0]).max(), np.abs(a[1] - b[1]).max()), tolerance)


# [a second forward, from the formulae] ------------------------------------------------------------

def meta_llama3_frequencies(freqs, factor, low, high, original):
    """Meta's apply_scaling (llama-models, Llama 3.1) as scalar code."""
    out = []
    for f in freqs:
        wavelength = 2 * math.pi / f
        if wavelength < original / high:
            out.append(f)
        elif wavelength > original / low:
            out.append(f / factor)
        else:
            s = (original / wavelength - low) / (high - low)
            out.append((1 - s) * f / factor + s * f)
    return out


def yarn_frequencies(freqs, d, theta, factor, original):
    """YaRN (Peng et al. 2023, section 3.2) as scalar code: a dimension whose wave turns more than 32
    times over the original length keeps its frequency, less than once is divided by the factor."""
    def dim_turning(r):
        return d * math.log(original / (r * 2 * math.pi)) / (2 * math.log(theta))
    lo, hi = max(math.floor(dim_turning(32)), 0), min(math.ceil(dim_turning(1)), d - 1)
    out = []
    for i, f in enumerate(freqs):
        ramp = min(max((i - lo) / (hi - lo), 0.0), 1.0)
        out.append(f * (1 - ramp) + f / factor * ramp)
    return out, 0.1 * math.log(factor) + 1


def numpy_forward(folder, ids):
    """(attention [layer][head][i][j], log-probabilities) position by position in numpy float64."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    c = config.get("text_config", config)
    family = c.get("model_type", "gemma3_text")
    raw = ref.read_state_dict(folder)
    W = {}
    for name, t in raw.items():  # the text tensors, under model.* / lm_head.*
        for old in ("language_model.model.", "model.language_model.", "model."):
            if name.startswith(old):
                W["model." + name[len(old):]] = t.numpy()
                break
        else:
            if name.endswith("lm_head.weight"):
                W["lm_head.weight"] = t.numpy()
    gemma = family.startswith("gemma")
    D, H, KV, L = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["num_hidden_layers"]
    hd = c.get("head_dim") or D // H
    eps = c["rms_norm_eps"]
    T = len(ids)

    def rms(v, w):
        return v / math.sqrt(float(np.mean(v * v)) + eps) * ((1 + w) if gemma else w)

    def gelu_tanh(v):
        return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))

    def window_and_rope(layer):
        """(window, frequencies, attention factor) of a layer, straight from the config fields."""
        sliding = False
        if family == "mistral":
            sliding = bool(c.get("sliding_window"))
        elif family in ("qwen2", "qwen3"):
            sliding = c["use_sliding_window"] and (c["layer_types"][layer] == "sliding_attention" if "layer_types" in c
                                                   else layer >= c["max_window_layers"])
        elif family == "gemma2":
            sliding = layer % 2 == 0
        elif gemma:
            sliding = (c["layer_types"][layer] == "sliding_attention" if "layer_types" in c
                       else (layer + 1) % c["sliding_window_pattern"] != 0)
        rope = c.get("rope_parameters")
        if rope and "full_attention" in rope:
            rope = rope["sliding_attention" if sliding else "full_attention"]
        elif rope is None:
            rope = dict(c.get("rope_scaling") or {}, rope_theta=c["rope_theta"])
            if family == "gemma3_text" and sliding:
                rope = {"rope_theta": c["rope_local_base_freq"]}
        theta = rope["rope_theta"]
        kind = rope.get("rope_type", rope.get("type", "default"))
        freqs = [theta ** (-2 * i / hd) for i in range(hd // 2)]
        attention = 1.0
        if kind == "linear":
            freqs = [f / rope["factor"] for f in freqs]
        elif kind == "llama3":
            freqs = meta_llama3_frequencies(freqs, rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"],
                                            rope["original_max_position_embeddings"])
        elif kind == "yarn":
            freqs, attention = yarn_frequencies(freqs, hd, theta, rope["factor"], rope["original_max_position_embeddings"])
        return (c["sliding_window"] if sliding else None), freqs, attention

    def turn(v, t, freqs, attention):
        out = v.copy()
        for i, f in enumerate(freqs):
            a, b = v[i], v[i + hd // 2]
            cs, sn = math.cos(t * f), math.sin(t * f)
            out[i], out[i + hd // 2] = a * cs - b * sn, b * cs + a * sn
        return out * attention

    xs = [W["model.embed_tokens.weight"][i] * (math.sqrt(D) if gemma else 1.0) for i in ids]
    attention_maps = []
    for layer in range(L):
        p = f"model.layers.{layer}."
        window, freqs, factor = window_and_rope(layer)
        qs, ks, vs = [], [], []
        for t, x in enumerate(xs):
            h = rms(x, W[p + "input_layernorm.weight"])
            q, k, v = (W[p + f"self_attn.{n}_proj.weight"] @ h + W.get(p + f"self_attn.{n}_proj.bias", 0.0) for n in "qkv")
            q, k, v = q.reshape(H, hd), k.reshape(KV, hd), v.reshape(KV, hd)
            if p + "self_attn.q_norm.weight" in W:
                q = np.stack([rms(r, W[p + "self_attn.q_norm.weight"]) for r in q])
                k = np.stack([rms(r, W[p + "self_attn.k_norm.weight"]) for r in k])
            qs.append([turn(r, t, freqs, factor) for r in q])
            ks.append([turn(r, t, freqs, factor) for r in k])
            vs.append(v)
        scale = (c["query_pre_attn_scalar"] if gemma else hd) ** -0.5
        cap = c.get("attn_logit_softcapping") if gemma else None
        maps = np.zeros((H, T, T))
        new_xs = []
        for i in range(T):
            heads_out = []
            for head in range(H):
                g = head // (H // KV)
                seen = [j for j in range(i + 1) if window is None or i - j < window]
                s = np.array([qs[i][head] @ ks[j][g] * scale for j in seen])
                if cap:
                    s = np.tanh(s / cap) * cap
                e = np.exp(s - s.max())
                w = e / e.sum()
                maps[head, i, seen] = w
                heads_out.append(sum(wj * vs[j][g] for wj, j in zip(w, seen)))
            out = W[p + "self_attn.o_proj.weight"] @ np.concatenate(heads_out)
            x = xs[i]
            if gemma:
                x = x + rms(out, W[p + "post_attention_layernorm.weight"])
                h = rms(x, W[p + "pre_feedforward_layernorm.weight"])
            else:
                x = x + out
                h = rms(x, W[p + "post_attention_layernorm.weight"])
            gate = W[p + "mlp.gate_proj.weight"] @ h
            act = gelu_tanh(gate) if gemma else gate / (1 + np.exp(-gate))
            m = W[p + "mlp.down_proj.weight"] @ (act * (W[p + "mlp.up_proj.weight"] @ h))
            x = x + (rms(m, W[p + "post_feedforward_layernorm.weight"]) if gemma else m)
            new_xs.append(x)
        xs = new_xs
        attention_maps.append(maps)
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"]) if not c.get("tie_word_embeddings") else W["model.embed_tokens.weight"]
    logits = np.stack([head @ rms(x, W["model.norm.weight"]) for x in xs])
    cap = c.get("final_logit_softcapping") if gemma else None
    if cap:
        logits = np.tanh(logits / cap) * cap
    logits = logits - logits.max(-1, keepdims=True)
    return np.stack(attention_maps), logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def main():
    small = dict(layers=2, d_model=16, d_ff=24, tokenizer="llama2")
    # 1. the second forward, family by family, with the odd sizes and scalings
    cases = {
        "llama llama3 kv1 head_dim 12": dict(family="llama", heads=4, kv_heads=1, head_dim=12, rope="llama3", rope_factor=8, untied=True),
        "llama yarn": dict(family="llama", heads=2, kv_heads=2, rope="yarn", rope_factor=4),
        "mistral window 4": dict(family="mistral", heads=4, kv_heads=2, window=4, rope="linear", rope_factor=2),
        "qwen2 biases, window from layer 1": dict(family="qwen2", heads=4, kv_heads=2, window=3, max_window_layers=1, tied=True),
        "qwen3 q/k norm, head_dim 10": dict(family="qwen3", heads=3, kv_heads=1, head_dim=10, rope="yarn", rope_factor=4),
        "gemma2 soft-caps, qpas 24": dict(family="gemma2", heads=4, kv_heads=2, window=3, attn_softcap=2, final_softcap=6, query_pre_attn_scalar=24),
        "gemma3_text local/global": dict(family="gemma3_text", layers=3, heads=4, kv_heads=2, window=4, sliding_pattern=3,
                                         rope="linear", rope_factor=8, rope_theta=1e6, head_dim=6),
        "gemma3 wrapper new form": dict(family="gemma3", heads=2, kv_heads=1, window=2, sliding_pattern=2, rope="yarn", rope_form="new"),
        "qwen3 new form, BF16": dict(family="qwen3", heads=4, kv_heads=2, window=5, max_window_layers=0, rope="llama3", rope_form="new", dtype="BF16"),
    }
    for name, options in cases.items():
        folder = make(name.split()[0] + str(abs(hash(name)) % 1000), **{**small, **options})
        ours, theirs = run(folder), numpy_forward(folder, IDS)
        report(f"numpy forward, {name}: attention", np.abs(ours[0] - theirs[0]).max(), 1e-12)
        report(f"numpy forward, {name}: log p", np.abs(ours[1] - theirs[1]).max(), 1e-10)

    # 2. both config forms, and the old form's "type" key
    for family, rope in [("llama", "llama3"), ("qwen2", "yarn"), ("gemma3_text", "linear"), ("gemma3", "yarn"), ("gemma2", "linear")]:
        o = dict(small, family=family, rope=rope, window=3, max_window_layers=1, sliding_pattern=2, layers=3)
        same(f"{family} {rope}: rope_theta/rope_scaling == rope_parameters",
             run(make(f"{family}-old", **o)), run(make(f"{family}-new", **o, rope_form="new")))
    o = dict(small, family="llama", rope="yarn")
    same("rope_scaling {type: yarn} == {rope_type: yarn}", run(make("type", **o, rope_type_key="type")), run(make("rope_type", **o)))
    plain = run(make("plain", **dict(small, family="llama")))
    for rope in ["linear", "llama3", "yarn"]:
        report(f"llama {rope} differs from plain RoPE", np.abs(run(make(rope, **dict(small, family="llama", rope=rope)))[0] - plain[0]).max(), 1e-3, want_small=False)

    # 3. GQA: KV heads repeated by hand (head h reads h // (H / KV)) == the grouped model; h % KV differs
    folder = make("gqa", **dict(small, family="llama", heads=4, kv_heads=2))
    cfg, sd, _ = ref.load(folder)
    grouped = ref.forward(cfg, sd, IDS)
    for order, name in [(torch.arange(4) // 2, "h // (H/KV)"), (torch.arange(4) % 2, "h % KV")]:
        wide = dict(sd)
        for i in range(cfg["num_hidden_layers"]):
            for n in "kv":
                w = sd[f"model.layers.{i}.self_attn.{n}_proj.weight"].view(2, 4, 16)
                wide[f"model.layers.{i}.self_attn.{n}_proj.weight"] = w[order].reshape(16, 16)
        full = ref.forward(dict(cfg, num_key_value_heads=4), wide, IDS)
        d = (torch.stack(full[0]) - torch.stack(grouped[0])).abs().max().item()
        report(f"GQA as repeated K/V heads ({name})", d, 1e-12, want_small=(name == "h // (H/KV)"))

    # 4. windows: W >= T is no window; W = 1 is the identity; the mask is i - j < W
    T = len(IDS)
    same("mistral window T == no window", run(make("wT", **dict(small, family="mistral", window=T))), run(make("w0", **dict(small, family="mistral"))))
    w1 = run(make("w1", **dict(small, family="mistral", window=1)))[0]
    report("window 1: every query sees only itself", np.abs(w1 - np.eye(T)).max(), 1e-12)
    w3 = run(make("w3", **dict(small, family="mistral", window=3)))[0]
    i, j = np.indices((T, T))
    report("window 3: weight 0 exactly where i - j >= 3 or j > i", np.abs(w3[..., (i - j >= 3) | (j > i)]).max(), 0.0)
    report("window 3: smallest weight where 0 <= i - j < 3", w3[..., (i - j < 3) & (j <= i)].min(), 0.0, want_small=False)

    # 5. the same numbers from shards, and from the Gemma 3 wrapper under both namings
    o = dict(small, family="qwen3", dtype="F16")
    same("3 shards == one file", run(make("one", **o)), run(make("sharded", **o, shards=3)))
    o = dict(small, family="gemma3_text", layers=3, window=3, sliding_pattern=2, untied=True)
    text = run(make("g3text", **o))
    same("gemma3 wrapper (language_model.model.*) == gemma3_text", run(make("g3legacy", **{**o, "family": "gemma3"})), text)
    same("gemma3 wrapper (model.language_model.*) == gemma3_text", run(make("g3new", **{**o, "family": "gemma3", "gemma3_naming": "new", "shards": 2})), text)

    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
