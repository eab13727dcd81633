#!/usr/bin/python3
"""The reference for the Llama-style families' forward, written out in PyTorch from a model folder's
state dict (model.safetensors or the shards of model.safetensors.index.json, read byte by byte) and
config.json, on given token ids; every 16-bit weight is widened and the maths runs in float64.
Prints {model, attention [layer][query head][i][j], next [t] -> top K {id, p}, probs_at [t][...]}.
Not our code path in any way: numpy reads the files, torch computes. Not a loader test either:
it trusts the folder (the hostile folders are for the CLI).

Conventions, each from Hugging Face transformers' own files (read 2026-12, main branch around v4.57 /
v5; the older releases agree where noted):
  llama        models/llama/modeling_llama.py: RMSNorm x / sqrt(mean(x^2) + eps) * w; q/k/v/o nn.Linear
               (y = x W^T), scores * head_dim^-0.5; GQA: query head h reads K/V head h // (H / KV)
               (repeat_kv); RoPE rotate_half (dims i and i + d/2 pair up), inv_freq = theta^(-2i/d)
               over head_dim, cos/sin multiplied by the rope type's attention factor; MLP
               down(silu(gate(x)) * up(x)); lm_head or, tie_word_embeddings, the embeddings.
  rope scaling modeling_rope_utils.py: linear (inv_freq / factor), llama3 (wavelength bands: longer than
               original/low_freq_factor divided by factor, shorter than original/high_freq_factor kept,
               smoothed between), yarn (ramp between interpolated and extrapolated inv_freq over the
               correction range of beta_fast 32 / beta_slow 1, floored / ceiled as truncate=True, on
               original_max_position_embeddings; attention factor 0.1 ln(factor) + 1 unless given).
               Older files (rope_theta + rope_scaling with "type" or "rope_type") and newer ones
               (rope_parameters, per layer type for Gemma 3) are read into the same description.
  mistral      models/mistral/modeling_mistral.py: Llama + sliding_window on every layer.
  qwen2        models/qwen2/modeling_qwen2.py + configuration_qwen2.py: Llama + biases on q, k, v (not o);
               window on layers i >= max_window_layers when use_sliding_window (or as layer_types says).
  qwen3        models/qwen3/modular_qwen3.py: Qwen 2 minus the biases plus RMSNorm over head_dim of each
               query and key head (q_norm, k_norm) before RoPE.
  gemma2       models/gemma2/modeling_gemma2.py: RMSNorm * (1 + w); embeddings * sqrt(hidden_size); scores *
               query_pre_attn_scalar^-0.5, capped tanh(s / c) * c (attn_logit_softcapping) before the mask;
               block: x + post_attention_norm(attn(input_norm(x))), then x + post_feedforward_norm(
               mlp(pre_feedforward_norm(x))); MLP with gelu_pytorch_tanh; layer i slides when i is even;
               logits capped the same way (final_logit_softcapping).
  gemma3       models/gemma3/modeling_gemma3.py + configuration_gemma3.py: Gemma 2 + q_norm / k_norm
               ((1 + w) RMSNorm over head_dim) before RoPE; layer i global when (i + 1) % sliding_window_pattern
               == 0 (default 6) or as layer_types says; global layers use rope_theta + rope_scaling, local
               ones rope_local_base_freq with plain RoPE. The "gemma3" wrapper's text_config and its tensors
               under language_model.model.* (published checkpoints) or model.language_model.* (transformers
               >= 4.52); vision_tower / multi_modal_projector tensors are ignored.
  window       masking_utils.py: query i sees key j iff 0 <= i - j < W (older Gemma 2 code: the same;
               some 4.3x-4.4x Mistral paths let i - j == W through, the current code does not).
Computed in float64 throughout: where transformers rounds in the weights' dtype (Gemma's
sqrt(hidden_size) normaliser cast to bfloat16, activations in bf16) this reference does not."""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text")
DEFAULT_THETA = {"llama": 10000.0, "mistral": 10000.0, "qwen2": 10000.0, "qwen3": 10000.0, "gemma2": 10000.0,
                 "gemma3_text": 1_000_000.0}


def read_safetensors(path, dtype=np.float64):
    """{name: tensor of dtype} of one safetensors file (F32, F16 and BF16 widened exactly); the GPT-2
    reference (torch_reference.py) reads its files here too."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        chunk = data[b:e]
        if info["dtype"] == "F32":
            arr = np.frombuffer(chunk, "<f4").astype(np.float32)
        elif info["dtype"] == "F16":
            arr = np.frombuffer(chunk, "<f2").astype(np.float32)
        elif info["dtype"] == "BF16":
            arr = (np.frombuffer(chunk, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: dtype {info['dtype']} not handled")
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).astype(dtype))
    return out


def read_state_dict(folder):
    """Every tensor of the folder: the single file or each shard the index names (once each)."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(folder, "model.safetensors"))
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    state = {}
    for shard in sorted(set(weight_map.values())):
        part = read_safetensors(os.path.join(folder, shard))
        state.update({name: t for name, t in part.items() if weight_map.get(name) == shard})
    missing = [name for name in weight_map if name not in state]
    if missing:
        raise SystemExit(f"torch_family_reference: the index names {missing[0]} but its shard lacks it")
    return state


def text_part(config, state):
    """(text config, state dict under Llama names: model.*, lm_head.*) of a folder; unwraps Gemma 3's
    multimodal checkpoint and drops its vision tower and projector."""
    if config.get("model_type") != "gemma3":
        return config, state
    text = dict(config["text_config"])
    text.setdefault("model_type", "gemma3_text")
    renamed = {}
    for name, t in state.items():
        for old, new in (("language_model.model.", "model."), ("model.language_model.", "model."),
                         ("language_model.lm_head.", "lm_head."), ("lm_head.", "lm_head.")):
            if name.startswith(old):
                renamed[new + name[len(old):]] = t
                break
    return text, renamed


# [RoPE] --------------------------------------------------------------------------------------------

def rope_description(cfg, layer_type):
    """{rope_type, rope_theta, ...scaling parameters} for one layer type, from either config form."""
    family = cfg["model_type"]
    params = cfg.get("rope_parameters")
    if params is not None:
        if "full_attention" in params or "sliding_attention" in params:  # per layer type (Gemma 3)
            params = params[layer_type]
        params = dict(params)
    elif family == "gemma3_text" and layer_type == "sliding_attention":
        params = {"rope_type": "default", "rope_theta": cfg.get("rope_local_base_freq", 10000.0)}
    else:
        params = dict(cfg.get("rope_scaling") or {})
        params["rope_theta"] = cfg.get("rope_theta", DEFAULT_THETA[family])
    params["rope_type"] = params.get("rope_type", params.get("type", "default"))
    return params


def inv_freq_of(rope, head_dim, max_positions):
    """(inv_freq (head_dim/2,) float64, attention_factor) as modeling_rope_utils computes them."""
    kind, theta, d = rope["rope_type"], float(rope["rope_theta"]), head_dim
    exponent = torch.arange(0, d, 2, dtype=torch.float64) / d
    inv_freq = 1.0 / theta ** exponent
    if kind == "default":
        return inv_freq, 1.0
    factor = float(rope["factor"])
    if kind == "linear":
        return inv_freq / factor, 1.0
    if kind == "llama3":
        original = rope["original_max_position_embeddings"]
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        wavelength = 2 * math.pi / inv_freq
        # long waves (beyond original / low) are slowed by the factor, short ones (below original / high)
        # kept, and the band between blends the two by where original / wavelength falls in [low, high]
        smooth = (original / wavelength - low) / (high - low)
        blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq
        out = torch.where(wavelength > original / low, inv_freq / factor, inv_freq)
        middle = (wavelength <= original / low) & (wavelength >= original / high)
        return torch.where(middle, blended, out), 1.0
    if kind == "yarn":
        # (some transformers versions replace factor by max_position_embeddings / original when the
        # latter is given; the generator writes max = factor * original so that both readings agree)
        original = rope.get("original_max_position_embeddings") or max_positions
        attention = rope.get("attention_factor")
        if attention is None:
            mscale, mscale_all = rope.get("mscale"), rope.get("mscale_all_dim")
            m = lambda s, k=1.0: 1.0 if s <= 1 else 0.1 * k * math.log(s) + 1.0  # noqa: E731
            attention = m(factor, mscale) / m(factor, mscale_all) if mscale and mscale_all else m(factor)
        beta_fast, beta_slow = rope.get("beta_fast") or 32, rope.get("beta_slow") or 1

        def dim_of(rotations):  # the dimension whose wave turns `rotations` times over the original length
            return d * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))
        lo, hi = dim_of(beta_fast), dim_of(beta_slow)
        if rope.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, d - 1)
        if lo == hi:
            hi += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float64) - lo) / (hi - lo)).clamp(0, 1)
        keep = 1 - ramp  # 1: extrapolate (the original frequency), 0: interpolate (divided by factor)
        return inv_freq / factor * (1 - keep) + inv_freq * keep, float(attention)
    raise SystemExit(f"torch_family_reference: rope_type {kind} not handled")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, inv_freq, attention_factor, T):
    """x (heads, T, head_dim): dims i and i + head_dim/2 of position t turn by t * inv_freq[i]."""
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    cos, sin = angles.cos() * attention_factor, angles.sin() * attention_factor
    return x * cos + rotate_half(x) * sin


# [the plan of one model] ---------------------------------------------------------------------------

def layer_plan(cfg):
    """Per layer (layer type, window W or None) as each family's config and modeling file decide."""
    family, n = cfg["model_type"], cfg["num_hidden_layers"]
    types = cfg.get("layer_types")
    window = cfg.get("sliding_window")
    if family == "llama":
        return [("full_attention", None)] * n
    if family == "mistral":
        return [("sliding_attention", window) if window else ("full_attention", None)] * n
    if family in ("qwen2", "qwen3"):
        window = window if cfg.get("use_sliding_window", False) else None
        if types is None:
            types = ["sliding_attention" if window is not None and i >= cfg.get("max_window_layers", 28)
                     else "full_attention" for i in range(n)]
    elif family == "gemma2":
        types = types or ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    elif family == "gemma3_text":
        pattern = cfg.get("sliding_window_pattern", 6)
        types = types or ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if len(types) != n or not set(types) <= {"sliding_attention", "full_attention"}:
        raise SystemExit(f"torch_family_reference: layer_types {types} for {n} layers not handled")
    return [(t, window if t == "sliding_attention" and window else None) for t in types]


def rms_norm(x, weight, eps, gemma):
    normed = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed * ((1 + weight) if gemma else weight)


def forward(cfg, sd, ids):
    """(weights per layer as (H, T, T) tensors, logits (T, V)) of the text model on token ids."""
    family = cfg["model_type"]
    if family not in FAMILIES:
        raise SystemExit(f"torch_family_reference: model_type {family} not handled")
    gemma = family.startswith("gemma")
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads") or H
    hd = cfg.get("head_dim") or D // H
    eps = cfg.get("rms_norm_eps", 1e-6)
    group = H // KV
    scale = cfg.get("query_pre_attn_scalar", 256) ** -0.5 if gemma else hd ** -0.5
    attn_cap = cfg.get("attn_logit_softcapping") if gemma else None
    final_cap = cfg.get("final_logit_softcapping") if gemma else None
    T = len(ids)
    plan = layer_plan(cfg)

    def linear(x, name, bias=False):
        y = x @ sd[name + ".weight"].T
        return y + sd[name + ".bias"] if bias else y

    def norm(x, name):
        return rms_norm(x, sd[name + ".weight"], eps, gemma)

    def mlp(x, p):
        gate = linear(x, p + "mlp.gate_proj")
        gate = F.gelu(gate, approximate="tanh") if gemma else F.silu(gate)
        return linear(gate * linear(x, p + "mlp.up_proj"), p + "mlp.down_proj")

    x = sd["model.embed_tokens.weight"][torch.tensor(ids)]
    if gemma:
        x = x * math.sqrt(D)
    i_pos = torch.arange(T)[:, None]
    j_pos = torch.arange(T)[None, :]
    weights = []
    for layer, (layer_type, window) in enumerate(plan):
        p = f"model.layers.{layer}."
        inv_freq, attention_factor = inv_freq_of(rope_description(cfg, layer_type), hd,
                                                 cfg.get("max_position_embeddings", 4096))
        h = norm(x, p + "input_layernorm")
        biased = family == "qwen2"
        q = linear(h, p + "self_attn.q_proj", biased).view(T, H, hd).transpose(0, 1)   # (H, T, hd)
        k = linear(h, p + "self_attn.k_proj", biased).view(T, KV, hd).transpose(0, 1)  # (KV, T, hd)
        v = linear(h, p + "self_attn.v_proj", biased).view(T, KV, hd).transpose(0, 1)
        if family in ("qwen3", "gemma3_text"):  # per-head RMSNorm over head_dim, before RoPE
            q = norm(q, p + "self_attn.q_norm")
            k = norm(k, p + "self_attn.k_norm")
        q = apply_rope(q, inv_freq, attention_factor, T)
        k = apply_rope(k, inv_freq, attention_factor, T)
        head_kv = torch.arange(H) // group  # GQA: query head h reads K/V head h // (H / KV)
        scores = q @ k[head_kv].transpose(1, 2) * scale  # (H, T, T)
        if attn_cap:
            scores = torch.tanh(scores / attn_cap) * attn_cap
        visible = j_pos <= i_pos
        if window:
            visible = visible & (i_pos - j_pos < window)
        w = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
        weights.append(w)
        out = linear((w @ v[head_kv]).transpose(0, 1).reshape(T, H * hd), p + "self_attn.o_proj")
        if gemma:
            x = x + norm(out, p + "post_attention_layernorm")
            x = x + norm(mlp(norm(x, p + "pre_feedforward_layernorm"), p), p + "post_feedforward_layernorm")
        else:
            x = x + out
            x = x + mlp(norm(x, p + "post_attention_layernorm"), p)
    x = norm(x, "model.norm")
    tied = cfg.get("tie_word_embeddings", gemma)
    head = sd["model.embed_tokens.weight"] if tied or "lm_head.weight" not in sd else sd["lm_head.weight"]
    logits = x @ head.T
    if final_cap:
        logits = torch.tanh(logits / final_cap) * final_cap
    return weights, logits


def summary(cfg, sd, model_type):
    """What the CLI's `model` block should say of this folder (params: the text model's numbers,
    the head counted once when tied)."""
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    tied = cfg.get("tie_word_embeddings", cfg["model_type"].startswith("gemma"))
    used = [t for n, t in sd.items() if n.startswith("model.") or (n == "lm_head.weight" and not tied)]
    return {"family": model_type, "layers": cfg["num_hidden_layers"], "heads": H,
            "kv_heads": cfg.get("num_key_value_heads") or H, "d_model": D, "d_head": cfg.get("head_dim") or D // H,
            "vocab_size": cfg["vocab_size"], "positions": "rope", "causal": True,
            "windows": [w for _, w in layer_plan(cfg)], "params": sum(t.numel() for t in used)}


def load(folder):
    """(text config, state dict under Llama names, the folder's own model_type)."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    return (*text_part(config, read_state_dict(folder)), config["model_type"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--probs-at", default="", help="comma-separated ids whose probability to print at every position")
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    cfg, sd, model_type = load(a.dir)
    ids = [int(t) for t in a.ids.split(",") if t]
    weights, logits = forward(cfg, sd, ids)
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, a.top, dim=-1)
    nxt = [[{"id": int(i), "p": float(p)} for p, i in zip(top.values[t], top.indices[t])] for t in range(len(ids))]
    want = [int(t) for t in a.probs_at.split(",") if t]
    print(json.dumps({"model": summary(cfg, sd, model_type), "attention": [w.tolist() for w in weights], "next": nxt,
                      "probs_at": [[float(probs[t, i]) for i in want] for t in range(len(ids))]}))


if __name__ == "__main__":
    main()
