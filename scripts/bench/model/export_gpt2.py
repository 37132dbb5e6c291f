#!/usr/bin/env python3
"""The whole-model benchmark's weights: a GPT-2-small-shaped model with seeded
random weights, as a Hugging Face folder and as two ONNX graphs of the same
weights (scripts/bench/model/run.sh).

    /usr/bin/python3 scripts/bench/model/export_gpt2.py [--out DIR] [--force]
                     [--layers N] [--context N] [--embed N] [--heads N] [--vocab N]

Writes into DIR (default build/bench/gpt2-small, outside git):
  config.json             a Hugging Face GPT-2 config (n_layer 12, n_head 12,
                          n_embd 768, vocab_size 50257, n_positions 1024)
  model.safetensors       the parameters, F32, Hugging Face's names (no prefix)
  model-f16.safetensors   the same rounded to F16 (for the memory rows)
  prefill.onnx            input_ids (1, T) -> logits (1, T, V) and attn_0 …
                          attn_11 (1, H, T, T): every layer's probabilities
  decode.onnx             input_ids (1, T) + past_key_l / past_value_l
                          (1, H, P, 64) -> logits + present_key_l /
                          present_value_l (1, H, P + T, 64); the bench feeds
                          T = 1 (and T = C once, with P = 0, to fill a cache)
  check.json              max |Δ| of onnxruntime-node's outputs against
                          PyTorch's (float32), checked once after export
  stamp.json              what was built; a rerun with the same settings
                          and the files present does nothing

Weights: GPT-2's initialisation (Hugging Face's GPT2PreTrainedModel._init_weights):
every matrix and embedding normal(0, 0.02), the residual projections
(attn.c_proj, mlp.c_proj) normal(0, 0.02 / sqrt(2 n_layer)), biases 0,
LayerNorm weight 1 and bias 0; torch.manual_seed(SEED).

The graphs are torch.onnx.export (opset 17: LayerNormalization) of the
project's PyTorch reference (tests/fixtures/models/reference.py, GPT2Model)
with one change, for speed and fidelity to Hugging Face's eager GPT-2: the
masked softmax is Hugging Face's (where(mask, scores, finfo.min), softmax),
without the reference's guard for rows that see no key (a causal mask without
padding has none). The exported graph is checked against the unpatched
reference in PyTorch before it is written, and against onnxruntime-node after.
"""

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures", "models"))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))

import gen_models  # noqa: E402  (tests/fixtures/models/gen_models.py: the GPT-2 config)
import reference  # noqa: E402  (tests/fixtures/models/reference.py)
import safetensors_io  # noqa: E402  (tests/fixtures/safetensors_io.py)

SEED = 20251202
VERSION = 1  # bump when the files' meaning changes


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def hf_config(V, P, E, L, H):
    config = gen_models.gpt2_config(V, P, E, L, H, "float32", ["GPT2LMHeadModel"], summary=False)
    config["_attnlab_bench"] = {"seed": SEED, "init": "GPT-2 (_init_weights)", "weights": "random"}
    return config


def init_gpt2_(model, num_layers):
    """Hugging Face's GPT2PreTrainedModel._init_weights, then the scaled residual projections."""
    g = 0.02
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                p.fill_(1.0)
            elif name.endswith(".bias"):
                p.zero_()
            elif name.endswith("c_proj.weight"):
                p.normal_(0.0, g / math.sqrt(2 * num_layers))
            else:  # wte, wpe, c_attn.weight, c_fc.weight
                p.normal_(0.0, g)


def write_safetensors(path, tensors, dtype):
    """tensors: [(name, float32 tensor)], written as dtype (torch.float32 or torch.float16)."""
    safetensors_io.write(path, [(name, t.detach().to(dtype)) for name, t in tensors], {"format": "pt"})


def hf_masked_softmax(scores, visible):
    """Hugging Face GPT2Attention._attn: where(causal, w, finfo.min), then softmax."""
    floor = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)  # a float constant, not a double
    return torch.softmax(torch.where(visible, scores, floor), dim=-1)


class Prefill(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        out = self.m(input_ids)
        return (out["logits"], *out["attentions"])


class Decode(torch.nn.Module):
    def __init__(self, m, L):
        super().__init__()
        self.m = m
        self.L = L

    def forward(self, input_ids, *past):
        pkv = [(past[2 * l], past[2 * l + 1]) for l in range(self.L)]
        out = self.m(input_ids, past_key_values=pkv)
        flat = []
        for k, v in out["past_key_values"]:
            flat += [k, v]
        return (out["logits"], *flat)


def export(model, cfg, out):
    L, H, E = cfg["numLayers"], cfg["numHeads"], cfg["embedDim"]
    D = E // H
    attn_names = ["attn_%d" % l for l in range(L)]
    past_names, present_names = [], []
    for l in range(L):
        past_names += ["past_key_%d" % l, "past_value_%d" % l]
        present_names += ["present_key_%d" % l, "present_value_%d" % l]
    saved = reference.masked_softmax
    reference.masked_softmax = hf_masked_softmax
    try:
        ids = torch.tensor([[1, 2, 3, 4, 5]], dtype=torch.int64)
        dyn = {"input_ids": {1: "T"}, "logits": {1: "T"}}
        for n in attn_names:
            dyn[n] = {2: "T", 3: "T"}
        t0 = time.time()
        torch.onnx.export(Prefill(model), (ids,), os.path.join(out, "prefill.onnx.tmp"), opset_version=17,
                          input_names=["input_ids"], output_names=["logits"] + attn_names, dynamic_axes=dyn,
                          do_constant_folding=True)
        os.replace(os.path.join(out, "prefill.onnx.tmp"), os.path.join(out, "prefill.onnx"))
        log("  prefill.onnx written (%.0f s)" % (time.time() - t0))
        P0, T0 = 3, 2
        past = [torch.randn(1, H, P0, D) * 0.1 for _ in range(2 * L)]
        ids2 = torch.tensor([[7, 8]], dtype=torch.int64)
        dyn = {"input_ids": {1: "T"}, "logits": {1: "T"}}
        for n in past_names:
            dyn[n] = {2: "P"}
        for n in present_names:
            dyn[n] = {2: "PT"}
        t0 = time.time()
        torch.onnx.export(Decode(model, L), (ids2, *past), os.path.join(out, "decode.onnx.tmp"), opset_version=17,
                          input_names=["input_ids"] + past_names, output_names=["logits"] + present_names,
                          dynamic_axes=dyn, do_constant_folding=True)
        os.replace(os.path.join(out, "decode.onnx.tmp"), os.path.join(out, "decode.onnx"))
        log("  decode.onnx written (%.0f s)" % (time.time() - t0))
    finally:
        reference.masked_softmax = saved


def check_patch(model, V):
    """The patched softmax gives the reference's results (float32, T = 64, and a cached step)."""
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(0, V, (1, 64), generator=g)
    with torch.no_grad():
        a = model(ids)
        saved = reference.masked_softmax
        reference.masked_softmax = hf_masked_softmax
        try:
            b = model(ids)
        finally:
            reference.masked_softmax = saved
    d = max((a["logits"] - b["logits"]).abs().max().item(),
            max((x - y).abs().max().item() for x, y in zip(a["attentions"], b["attentions"])))
    assert d <= 1e-6, ("HF softmax differs from the reference's", d)
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench", "gpt2-small"))
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--embed", type=int, default=768)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--no-check", action="store_true", help="skip the onnxruntime-node check")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(a.out, exist_ok=True)
    hf = hf_config(a.vocab, a.context, a.embed, a.layers, a.heads)
    stamp = {"version": VERSION, "seed": SEED, "config": hf, "torch": torch.__version__,
             "script": hashlib.sha256(open(__file__, "rb").read()).hexdigest()[:16]}
    files = ["config.json", "model.safetensors", "model-f16.safetensors", "prefill.onnx", "decode.onnx"]
    stamp_path = os.path.join(a.out, "stamp.json")
    if not a.force and os.path.exists(stamp_path) and all(os.path.exists(os.path.join(a.out, f)) for f in files):
        with open(stamp_path) as f:
            old = json.load(f)
        if old.get("version") == VERSION and old.get("seed") == SEED and old.get("config") == hf:
            log("export_gpt2: %s is up to date (--force to rebuild)" % os.path.relpath(a.out, REPO))
            return 0
    cfg = reference.normalise_config(hf)
    torch.manual_seed(SEED)
    model = reference.GPT2Model(cfg).float()
    init_gpt2_(model, cfg["numLayers"])
    model.eval()
    params = [(n, p) for n, p in model.named_parameters()]
    count = sum(p.numel() for _, p in params)
    log("export_gpt2: %d parameters (%.1f M), writing %s" % (count, count / 1e6, os.path.relpath(a.out, REPO)))
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(hf, f, indent=2)
    write_safetensors(os.path.join(a.out, "model.safetensors"), params, torch.float32)
    write_safetensors(os.path.join(a.out, "model-f16.safetensors"), params, torch.float16)
    d = check_patch(model, cfg["vocabSize"])
    log("  Hugging Face's softmax vs the reference's: max |Δ| %.1e" % d)
    export(model, cfg, a.out)

    # Reference outputs of PyTorch (float32) for the onnxruntime-node check: a prefill of 64 tokens, then a
    # decode of 3 tokens after a cache of 61 made by the decode graph itself.
    g = torch.Generator().manual_seed(9)
    ids = torch.randint(0, cfg["vocabSize"], (1, 64), generator=g)
    with torch.no_grad():
        ref = model(ids)
    check_in = os.path.join(a.out, "check-ref.safetensors")
    tensors = [("input_ids", ids.to(torch.float32)), ("logits", ref["logits"])]
    tensors += [("attn_%d" % l, p) for l, p in enumerate(ref["attentions"])]
    write_safetensors(check_in, tensors, torch.float32)
    result = {"skipped": True}
    if not a.no_check:
        r = subprocess.run(["node", os.path.join(HERE, "check-onnx.mjs"), a.out], capture_output=True, text=True)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            log("export_gpt2: the onnxruntime-node check failed")
            return 1
        result = json.loads(r.stdout)
    with open(os.path.join(a.out, "check.json"), "w") as f:
        json.dump(result, f, indent=2)
    os.remove(check_in)
    stamp["check"] = result
    stamp["parameters"] = count
    with open(stamp_path, "w") as f:
        json.dump(stamp, f, indent=2)
    log("export_gpt2: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
