#!/usr/bin/env python3
"""Checks the couplet model's gradient against PyTorch at a real batch (docs/couplet-model.md).

    /usr/bin/python3 scripts/couplet/check_gradients.py --model DIR [--weights FILE] [--data DIR] [--split validation]
        [--batch 64] [--length 7] [--work DIR]

Takes the first --batch pairs of --length characters of a split of scripts/couplet/prepare.mjs's data, framed as
the trainer frames them (the encoder reads upper + [EOS]; labels lower + [EOS]; decoder inputs shift_right(labels)
from decoder_start_token_id), and the weights of --weights (default DIR/model.safetensors; F32/F16/BF16) under
DIR/config.json. PyTorch 1.13: tests/fixtures/models/reference_t5.py's T5ForConditionalGeneration in float64, the
mean cross-entropy and autograd. attnlab: scripts/couplet/lossgrad.mjs (the package's simd build, lossAndGrad).
Prints each parameter's relative L2 difference ||g - g_torch64|| / ||g_torch64|| for attnlab and for the same
PyTorch code in float32 (what float32 rounding alone gives: a trained checkpoint can be ill-conditioned, with
attention scores that T5 does not scale by 1/sqrt(d)); exit status 1 when the loss differs by more than 1e-5
relative or a gradient by more than max(1e-3, 2 x PyTorch float32's).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))

import safetensors_io as sio  # noqa: E402
from reference_t5 import build_model, normalise_config  # noqa: E402

EOS = 3


def read_pairs(path, n, count):
    """The first `count` pairs of n characters of a .u16 split: (upper + [EOS], lower + [EOS]) id lists."""
    raw = np.fromfile(path, np.uint16).astype(np.int64)
    pairs, at = [], 0
    while at < len(raw) and len(pairs) < count:
        m = int(raw[at])
        if m == n:
            pairs.append((list(raw[at + 2:at + 2 + m]) + [EOS], list(raw[at + 2 + m:at + 2 + 2 * m]) + [EOS]))
        at += 2 + 2 * m
    if len(pairs) < count:
        raise SystemExit("only %d pairs of %d characters in %s" % (len(pairs), n, path))
    return torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])


def torch_grads(hf, weights, tokens, labels, dtype):
    cfg = normalise_config(hf)
    model = build_model(cfg, "seq2seq-lm").to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(weights[name]).to(dtype))
    model.eval()
    dec = torch.full_like(labels, cfg["decoderStartTokenId"])
    dec[:, 1:] = labels[:, :-1]
    logits = model(tokens, torch.ones_like(tokens), dec)["logits"]
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
    loss.backward()
    return loss.item(), {n: p.grad.double().numpy() for n, p in model.named_parameters()}


def main():
    cache = os.environ.get("ATTNLAB_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "attnlab")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--weights")
    ap.add_argument("--data", default=os.path.join(cache, "couplet", "data"))
    ap.add_argument("--split", default="validation")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=7)
    ap.add_argument("--work", default=tempfile.mkdtemp(prefix="couplet-grad-"))
    a = ap.parse_args()
    weights_file = a.weights or os.path.join(a.model, "model.safetensors")
    with open(os.path.join(a.model, "config.json")) as f:
        hf = json.load(f)
    tokens, labels = read_pairs(os.path.join(a.data, a.split + ".u16"), a.length, a.batch)
    weights = sio.read_arrays(weights_file, np.float64)
    torch_loss, expected = torch_grads(hf, weights, tokens, labels, torch.float64)
    torch32 = torch_grads(hf, weights, tokens, labels, torch.float32)[1]
    batch = os.path.join(a.work, "batch.json")
    with open(batch, "w") as f:
        json.dump({"inputIds": tokens.flatten().tolist(), "labels": labels.flatten().tolist(),
                   "shape": list(tokens.shape)}, f)
    out = os.path.join(a.work, "grads.safetensors")
    run = subprocess.run(["node", os.path.join(ROOT, "scripts", "couplet", "lossgrad.mjs"), "--model", a.model,
                          "--weights", weights_file, "--batch", batch, "--out", out],
                         check=True, capture_output=True, text=True)
    loss = json.loads(run.stdout)["loss"]
    got = sio.read_arrays(out, np.float64)
    worst, bad = 0.0, []
    print("%-70s %9s %9s" % ("relative L2 difference to PyTorch float64", "attnlab", "torch f32"))
    for name, e in expected.items():
        rel, rel32 = (np.linalg.norm(g[name] - e) / np.linalg.norm(e) for g in (got, torch32))
        worst = max(worst, rel)
        if rel > max(1e-3, 2 * rel32):
            bad.append(name)
        print("%-70s %9.2e %9.2e" % (name, rel, rel32))
    loss_rel = abs(loss - torch_loss) / abs(torch_loss)
    print("loss: attnlab %.7f, PyTorch float64 %.7f (relative %.1e); worst gradient %.2e over %d tensors; %d beyond"
          " max(1e-3, 2 x float32's)" % (loss, torch_loss, loss_rel, worst, len(expected), len(bad)))
    sys.exit(1 if loss_rel > 1e-5 or bad else 0)


if __name__ == "__main__":
    main()
