#!/usr/bin/python3
"""One training step in PyTorch, to check the trainer's: GPT-2 written out in torch from the starting
model folder's state dict, the same batch (batch.json beside it), the same loss (mean cross-entropy
over the targets), clipping and torch.optim.AdamW with the same hyper-parameters; then the updated
weights compared with the trainer's folder. Prints {loss, max_abs_diff, worst}. Not our code path:
numpy reads the files, torch computes and differentiates."""
import argparse
import json
import os

import torch
import torch.nn.functional as F

from torch_reference import gpt2, read_state_dict


def loss_of(sd, cfg, batch, answer_only):
    total, count = 0.0, 0
    for seq in batch:
        T = len(seq)
        _, logits = gpt2(sd, cfg, seq)
        first = T - 2 if answer_only else 0
        total = total + F.cross_entropy(logits[first:T - 1], torch.tensor(seq)[first + 1:], reduction="sum")
        count += T - 1 - first
    return total / count


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--init", required=True, help="the starting folder (config.json, model.safetensors, batch.json)")
    ap.add_argument("--after", required=True, help="the trainer's folder after one step")
    a = ap.parse_args()
    with open(os.path.join(a.init, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(a.init, "batch.json")) as f:
        run = json.load(f)
    sd = {k: v.clone().requires_grad_(True) for k, v in read_state_dict(os.path.join(a.init, "model.safetensors")).items()}
    decay = [v for v in sd.values() if v.dim() == 2]
    no_decay = [v for v in sd.values() if v.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": run["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=run["lr"], betas=(run["beta1"], run["beta2"]), eps=run["eps"])
    loss = loss_of(sd, cfg, run["batch"], run["answer_only"])
    loss.backward()
    if run["grad_clip"] > 0:
        torch.nn.utils.clip_grad_norm_(list(sd.values()), run["grad_clip"])
    opt.step()
    after = read_state_dict(os.path.join(a.after, "model.safetensors"))
    worst, worst_name = 0.0, ""
    for name, v in sd.items():
        d = (v.detach() - after[name]).abs().max().item()
        if d > worst:
            worst, worst_name = d, name
    print(json.dumps({"loss": loss.item(), "max_abs_diff": worst, "worst": worst_name, "tensors": len(sd)}))


if __name__ == "__main__":
    main()
