#!/usr/bin/env python3
"""Checks the poem model's training loop against PyTorch (issue 26 item 2; docs/poem-model.md).

    /usr/bin/python3 scripts/poems/check_pytorch.py [--bin build/native/attnlab_train_poems] [--data DIR]
        [--work DIR] [--steps 300] [--csv OUT.csv] [--json OUT.json] [--model DIR]

1. Runs attnlab_train_poems on a small configuration of the same architecture as the poem model (Llama family:
   RMSNorm, RoPE, SwiGLU, tied embeddings; E 64, 2 layers, 4 heads, hidden 192, the real vocabulary and poems,
   16 poems a batch, 2 to a row as in the real run, 300 steps, the same schedule shape: warm-up then cosine) with
   --dump, which writes its initial weights, every batch, the learning rate and loss of every step and the final
   weights.
2. Trains tests/fixtures/models/reference.py's LlamaForCausalLM (Hugging Face names) in float32 from the same
   initial weights on the same batches with the same learning rates: F.cross_entropy(ignore_index=-100),
   torch.nn.utils.clip_grad_norm_(1.0), torch.optim.AdamW with nanoGPT's two groups (weight decay on >= 2-D
   tensors only), 2 threads.
3. Reports the largest |loss difference| over the curve, the gradient norms' largest relative difference and the
   final weights' largest difference; a float32 PyTorch run repeated in float64 shows what float32 noise alone gives.

With --model DIR it also reads a shipped folder (config.json via reference.normalise_config, model.safetensors in
F16) and compares PyTorch's loss on the first 200 test poems with attnlab's (attnlab_train_poems --eval).
Exit status 1 when attnlab's curve is further from the float64 PyTorch run than PyTorch's own float32 run is (the
noise of float32 over these steps), or than --tolerance (default 0.01 nats) when that is larger.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
import safetensors_io  # noqa: E402  (tests/fixtures/safetensors_io.py)
from reference import build_model, normalise_config  # noqa: E402

SMALL = {"embed": 64, "layers": 2, "heads": 4, "hidden": 192, "batch": 16, "poems_per_row": 2, "lr": 3e-3,
         "warmup": 30, "min_lr_ratio": 0.1, "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "clip": 1.0,
         "seed": 7}


def read_raw_f16(path):
    """{name: the F16 bits as uint16} of a safetensors file of F16 tensors."""
    entries, _ = safetensors_io.read(path)
    assert all(e.dtype == "F16" for e in entries.values()), sorted((k, e.dtype) for k, e in entries.items())
    return {name: safetensors_io.bits16(e) for name, e in entries.items()}


def read_batches(path):
    raw = np.fromfile(path, dtype="<i4")
    out, i = [], 0
    while i < raw.size:
        b, t = int(raw[i]), int(raw[i + 1])
        i += 2
        tokens = raw[i:i + b * t].reshape(b, t)
        i += b * t
        targets = raw[i:i + b * t].reshape(b, t)
        i += b * t
        out.append((torch.from_numpy(tokens.astype(np.int64)), torch.from_numpy(targets.astype(np.int64))))
    return out


def small_config(vocab, context):
    return {"arch": "llama", "vocabSize": vocab, "contextLength": context, "embedDim": SMALL["embed"],
            "numLayers": SMALL["layers"], "numHeads": SMALL["heads"], "numKVHeads": SMALL["heads"],
            "headDim": SMALL["embed"] // SMALL["heads"], "hiddenDim": SMALL["hidden"], "normEps": 1e-5,
            "ropeTheta": 10000.0, "tieEmbeddings": True, "attentionBias": "none", "slidingWindow": None}


def load(model, tensors, dtype):
    state = {k: torch.from_numpy(v.copy()).to(dtype) for k, v in tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    unexpected = [k for k in unexpected if not k.endswith("rotary_emb.inv_freq")]
    assert not unexpected and all(k.endswith("inv_freq") for k in missing), (missing, unexpected)


def train_torch(cfg, init, batches, lrs, dtype):
    torch.manual_seed(0)
    model = build_model(cfg).to(dtype)
    load(model, init, dtype)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": SMALL["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lrs[0],
                            betas=(SMALL["beta1"], SMALL["beta2"]), eps=SMALL["eps"])
    losses, norms = [], []
    for (tokens, targets), lr in zip(batches, lrs):
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        logits = model(tokens)["logits"]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), SMALL["clip"])
        opt.step()
        losses.append(float(loss))
        norms.append(float(norm))
        if len(losses) % 50 == 0:
            print("  pytorch %s step %d: loss %.4f" % (str(dtype).replace("torch.", ""), len(losses), losses[-1]),
                  flush=True)
    final = {k: v.detach().to(torch.float32).numpy() for k, v in model.state_dict().items()
             if not k.endswith("inv_freq")}
    return losses, norms, final


def test_loss_torch(model_dir, data_dir, poems):
    """PyTorch's mean cross-entropy on the first `poems` test poems, from the shipped files (float64 forward)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = normalise_config(json.load(f))
    model = build_model(cfg).double()
    load(model, safetensors_io.read_arrays(os.path.join(model_dir, "model.safetensors")), torch.float64)
    ids = np.fromfile(os.path.join(data_dir, "test.u16"), dtype="<u2").astype(np.int64)
    bos, eos = 2, 3
    starts = np.flatnonzero(ids == bos)[:poems]
    total, count = 0.0, 0
    with torch.no_grad():
        for s in starts:
            e = s + int(np.flatnonzero(ids[s:] == eos)[0]) + 1
            seq = torch.from_numpy(ids[s:e]).view(1, -1)
            logits = model(seq[:, :-1])["logits"][0]
            total += float(F.cross_entropy(logits, seq[0, 1:], reduction="sum"))
            count += seq.shape[1] - 1
    return total / count, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "native", "attnlab_train_poems"))
    ap.add_argument("--data", default=os.path.join(os.environ.get("ATTNLAB_CACHE") or
                                                   os.path.join(os.path.expanduser("~"), ".cache", "attnlab"),
                                                   "poems", "data"))
    ap.add_argument("--work", default="/tmp/attnlab-poems-pytorch-check")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--csv", help="write step, lr, both losses and gradient norms here")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--model", help="also check a shipped folder (config.json + model.safetensors)")
    ap.add_argument("--f32", help="with --model: the run's model-f32.safetensors; checks that model.safetensors "
                    "holds exactly NumPy's float16 rounding (round to nearest even) of it")
    ap.add_argument("--no-float64", action="store_true", help="skip the float64 PyTorch run")
    args = ap.parse_args()
    torch.set_num_threads(2)

    dump = os.path.join(args.work, "dump")
    cmd = [args.bin, "--data", args.data, "--out", os.path.join(args.work, "out"), "--dump", dump,
           "--arch", "llama", "--steps", str(args.steps), "--log-every", "50", "--eval-every", "0",
           "--final-eval-poems", "200", "--threads", "2"]
    for k in ("embed", "layers", "heads", "hidden", "batch", "poems_per_row", "lr", "warmup", "seed"):
        cmd += ["--" + k.replace("_", "-"), str(SMALL[k])]
    for k in ("min_lr_ratio", "weight_decay", "beta1", "beta2", "eps", "clip"):
        cmd += ["--" + k.replace("_", "-"), repr(SMALL[k])]
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    attnlab_s = time.time() - t0

    with open(os.path.join(args.data, "data.txt")) as f:
        meta = dict(line.split()[:2] for line in f if line.strip() and not line.startswith("split"))
    cfg = small_config(int(meta["vocab_size"]), int(meta["context_length"]))
    with open(os.path.join(dump, "steps.csv")) as f:
        steps = list(csv.DictReader(f))
    lrs = [float(r["lr"]) for r in steps]
    ours = [float(r["loss"]) for r in steps]
    our_norms = [float(r["grad_norm"]) for r in steps]
    batches = read_batches(os.path.join(dump, "batches.i32"))
    init = safetensors_io.read_arrays(os.path.join(dump, "init.safetensors"))
    final_ours = safetensors_io.read_arrays(os.path.join(dump, "final.safetensors"))
    assert len(batches) == len(steps) == args.steps

    t0 = time.time()
    losses, norms, final = train_torch(cfg, init, batches, lrs, torch.float32)
    torch_s = time.time() - t0
    d_loss = [abs(a - b) for a, b in zip(ours, losses)]
    d_norm = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(our_norms, norms)]
    d_w = max(float(np.max(np.abs(final_ours[k] - final[k]))) for k in final)
    summary = {
        "config": {**{k: SMALL[k] for k in SMALL}, "vocab": cfg["vocabSize"], "steps": args.steps,
                   "parameters": int(sum(v.size for v in init.values()))},
        "first_loss": {"attnlab": ours[0], "pytorch": losses[0]},
        "last_loss": {"attnlab": ours[-1], "pytorch": losses[-1]},
        "max_abs_loss_diff": max(d_loss),
        "mean_abs_loss_diff": sum(d_loss) / len(d_loss),
        "max_abs_loss_diff_first_100": max(d_loss[:100]),
        "max_rel_grad_norm_diff": max(d_norm),
        "max_rel_grad_norm_diff_first_100": max(d_norm[:100]),
        "max_abs_final_weight_diff": d_w,
        "seconds": {"attnlab": round(attnlab_s, 1), "pytorch_float32": round(torch_s, 1)},
        "torch": torch.__version__,
    }
    if not args.no_float64:
        l64, n64, f64 = train_torch(cfg, init, batches, lrs, torch.float64)
        summary["pytorch_float32_vs_float64"] = {
            "max_abs_loss_diff": max(abs(a - b) for a, b in zip(losses, l64)),
            "max_abs_loss_diff_first_100": max(abs(a - b) for a, b in zip(losses[:100], l64)),
            "max_rel_grad_norm_diff": max(abs(a - b) / b for a, b in zip(norms, n64)),
            "max_abs_final_weight_diff": max(float(np.max(np.abs(final[k] - f64[k]))) for k in final),
        }
        summary["attnlab_vs_pytorch_float64"] = {
            "max_abs_loss_diff": max(abs(a - b) for a, b in zip(ours, l64)),
            "max_abs_final_weight_diff": max(float(np.max(np.abs(final_ours[k] - f64[k]))) for k in final),
        }
    if args.model:
        ref, n = test_loss_torch(args.model, args.data, 200)
        out = subprocess.run([args.bin, "--data", args.data, "--eval", os.path.join(args.model, "model.safetensors"),
                              "--final-eval-poems", "200", "--threads", "2"] + model_flags(args.model),
                             check=True, capture_output=True, text=True).stdout
        line = next(l for l in out.splitlines() if l.startswith("test:"))
        got = json.loads(line[len("test:"):])
        summary["shipped_model_first_200_test_poems"] = {"pytorch_float64": ref, "attnlab": got["loss"],
                                                         "targets": n, "abs_diff": abs(ref - got["loss"])}
        if args.f32:
            f16 = read_raw_f16(os.path.join(args.model, "model.safetensors"))
            f32 = safetensors_io.read_arrays(args.f32)
            assert sorted(f16) == sorted(f32), (sorted(f16), sorted(f32))
            bad = sum(int(np.count_nonzero(f32[k].astype(np.float16).view("<u2") != f16[k])) for k in f16)
            summary["shipped_model_f16_rounding"] = {"tensors": len(f16), "elements_differing_from_numpy": bad}
            if bad:
                print("model.safetensors is not NumPy's float16 rounding of --f32: %d elements differ" % bad)
                return 1
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["step", "lr", "loss_attnlab", "loss_pytorch", "grad_norm_attnlab", "grad_norm_pytorch"])
            for i in range(args.steps):
                w.writerow([i + 1, "%.6g" % lrs[i], "%.6f" % ours[i], "%.6f" % losses[i], "%.5f" % our_norms[i],
                            "%.5f" % norms[i]])
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    # Within noise: attnlab's curve no further from the float64 run than PyTorch's own float32 run is (the float32
    # noise of 300 chaotic steps), or within --tolerance (without the float64 run, the only bound).
    f64 = summary.get("attnlab_vs_pytorch_float64")
    noise = summary.get("pytorch_float32_vs_float64", {}).get("max_abs_loss_diff", 0.0)
    diff = f64["max_abs_loss_diff"] if f64 else summary["max_abs_loss_diff"]
    bound = max(args.tolerance, noise)
    ok = math.isfinite(diff) and diff <= bound
    print(("agree: " if ok else "DISAGREE: ") + "max |attnlab - PyTorch %s| = %.4g against %.4g (max of --tolerance and "
          "PyTorch float32's own distance from float64)" % ("float64" if f64 else "float32", diff, bound))
    return 0 if ok else 1


def model_flags(model_dir):
    """attnlab_train_poems flags for the architecture of a shipped config.json."""
    with open(os.path.join(model_dir, "config.json")) as f:
        hf = json.load(f)
    return ["--arch", "llama", "--embed", str(hf["hidden_size"]), "--layers", str(hf["num_hidden_layers"]),
            "--heads", str(hf["num_attention_heads"]), "--kv-heads", str(hf["num_key_value_heads"]),
            "--hidden", str(hf["intermediate_size"]), "--context", str(hf["max_position_embeddings"]),
            "--rope-theta", str(hf["rope_theta"])]


if __name__ == "__main__":
    sys.exit(main())
