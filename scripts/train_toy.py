#!/usr/bin/env python3
"""Train the demo's toy attention models and export them as small JSON files.

The model is the tiny transformer of tests/fixtures/torch-grad/README.md (kind
"train_step"), so that the in-browser training demo can be compared with it:

    x      = embedding.weight[tokens] + pe            (B, T, E); fixed sinusoidal pe
    a      = MHA(x, x, x)                             nn.MultiheadAttention(E, H, batch_first=True)
    h      = x + a                                    residual
    logits = h @ readout.weight^T + readout.bias      (B, T, V)

Two synthetic tasks whose right attention pattern is crisp:

  reverse  V 12 (letters A..L), T 6, E 16, H 2, bias=False: exactly the train_step
           model (same sizes, no biases). targets[t] = tokens[T-1-t]; the learned
           pattern is the anti-diagonal.
  recall   a key-value store, E 16, H 2, bias=True. Five "key=value" tokens
           (keys a..h, distinct; values 0..9), then three distinct queries "k?" of
           stored keys; the answer at a query is the stored digit. The query must
           attend to the store token with its key. A store entry is one token
           ("c=7") because one attention layer cannot look one position past a
           key: that takes two layers (an induction head).

Each file (web/demo/models/toy-<task>.json) holds the vocabulary, the config, the
MHA state dict with PyTorch's names (in the format the demo's file picker reads:
{"embed_dim", "num_heads", "state_dict": {name: {"shape", "data"}}}), the
embedding / readout weights, the positional encoding, and reference examples with
PyTorch's outputs (attention output, per-head weights, logits), computed in
float64 from the stored float32 parameters and rounded to float32.

Trained weights are rounded to 4 decimals (then float32) to keep the files
small; accuracy and the reference outputs are computed with the rounded weights.

Usage: /usr/bin/python3 scripts/train_toy.py [--out web/demo/models] [--task reverse|recall|all]
Deterministic (seeded, one thread): reruns on the same torch build write the same bytes. About a
minute on one core.
"""

import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "attnlab-toy-model"
FORMAT_VERSION = 1
MAX_BYTES = 100_000


# ----------------------------------------------------------------------------
# Tasks: vocabulary and example generators (mirrored in web/demo/toy.js)
# ----------------------------------------------------------------------------

class Reverse:
    name = "reverse"
    vocab = [chr(ord("A") + i) for i in range(12)]
    seq_len = 6
    embed_dim = 16
    num_heads = 2
    bias = False
    causal = False
    description = ("Reverse the sequence: the answer at position t is the token at position T-1-t. "
                   "Tokens are 6 letters from A..L (repeats allowed). The right attention pattern is the "
                   "anti-diagonal: query t looks at key T-1-t.")

    @classmethod
    def sample(cls, rng):
        toks = [rng.randrange(len(cls.vocab)) for _ in range(cls.seq_len)]
        return toks, toks[::-1], list(range(cls.seq_len))


RECALL_KEYS = [chr(ord("a") + i) for i in range(8)]
RECALL_VALUES = [str(d) for d in range(10)]


class Recall:
    name = "recall"
    keys = RECALL_KEYS
    values = RECALL_VALUES
    n_pairs = 5
    n_queries = 3
    # answers first (digits), then the store tokens "k=v", then the queries "k?"
    vocab = RECALL_VALUES + [k + "=" + v for k in RECALL_KEYS for v in RECALL_VALUES] + [k + "?" for k in RECALL_KEYS]
    seq_len = n_pairs + n_queries
    embed_dim = 16
    num_heads = 2
    bias = True
    causal = False
    description = ("Key-value recall: five store tokens 'k=v' (distinct keys a..h, values 0..9), then three "
                   "queries 'k?' of stored keys. The answer at a query is the digit stored under its key. "
                   "The right attention pattern: each query row puts its weight on the store token with "
                   "the same key. Only the query positions are trained and scored. A store entry is one "
                   "token because one attention layer cannot look one position past a key (that needs two "
                   "layers, an induction head).")

    @classmethod
    def sample(cls, rng):
        ks = rng.sample(range(len(cls.keys)), cls.n_pairs)
        vs = [rng.randrange(10) for _ in ks]
        toks = [10 + k * 10 + v for k, v in zip(ks, vs)]
        qi = rng.sample(range(cls.n_pairs), cls.n_queries)
        toks += [10 + 80 + ks[i] for i in qi]
        targets = [-100] * cls.n_pairs + [vs[i] for i in qi]   # -100: not scored
        return toks, targets, list(range(cls.n_pairs, cls.seq_len))


TASKS = {"reverse": Reverse, "recall": Recall}


# ----------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------

def positional_encoding(T, E):
    """pe[t, 2i] = sin(t / 10000^(2i/E)), pe[t, 2i+1] = cos(...), float64 -> float32."""
    pe = np.zeros((T, E), dtype=np.float64)
    for t in range(T):
        for i in range(E // 2):
            ang = t / (10000.0 ** (2 * i / E))
            pe[t, 2 * i] = math.sin(ang)
            pe[t, 2 * i + 1] = math.cos(ang)
    return torch.tensor(pe.astype(np.float32))


class TinyTransformer(nn.Module):
    def __init__(self, V, E, H, bias, T):
        super().__init__()
        self.embedding = nn.Embedding(V, E)
        self.attn = nn.MultiheadAttention(E, H, bias=bias, batch_first=True)
        self.readout = nn.Linear(E, V)
        self.register_buffer("pe", positional_encoding(T, E), persistent=False)

    def forward(self, tokens, attn_mask=None, need_weights=False):
        x = self.embedding(tokens) + self.pe[: tokens.shape[1]].to(self.embedding.weight.dtype)
        a, w = self.attn(x, x, x, attn_mask=attn_mask, need_weights=need_weights,
                         average_attn_weights=False)
        return self.readout(x + a), a, w


def batch(task, rng, n):
    toks, tgts = [], []
    for _ in range(n):
        t, y, _ = task.sample(rng)
        toks.append(t)
        tgts.append(y)
    return torch.tensor(toks), torch.tensor(tgts)


def accuracy(model, task, rng, n):
    """(answer accuracy, whole-example accuracy) on n fresh examples."""
    toks, tgts = batch(task, rng, n)
    with torch.no_grad():
        logits, _, _ = model(toks)
    pred = logits.argmax(-1)
    scored = tgts != -100
    ok = (pred == tgts) | ~scored
    return (float(((pred == tgts) & scored).sum()) / float(scored.sum()),
            float(ok.all(dim=1).float().mean()))


def round_params(model, decimals=4):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.round(p.double() * 10 ** decimals).div(10 ** decimals).float())


def train(task, seed, steps, batch_size, lr):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = TinyTransformer(len(task.vocab), task.embed_dim, task.num_heads, task.bias, task.seq_len)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr * 0.05)
    t0 = time.time()
    loss = None
    for step in range(1, steps + 1):
        toks, tgts = batch(task, rng, batch_size)
        logits, _, _ = model(toks)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgts.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 500 == 0 or step == steps:
            acc, _ = accuracy(model, task, random.Random(10_000 + step), 512)
            print(f"  [{task.name}] step {step:5d}  loss {loss.item():.4f}  acc {acc:.4f}  "
                  f"({time.time() - t0:.1f} s)", flush=True)
    return model, loss.item(), time.time() - t0


# ----------------------------------------------------------------------------
# JSON writing: float32 in shortest form that reads back bit-exact
# ----------------------------------------------------------------------------

def fmt_f32(x):
    x = np.float32(x)
    if not np.isfinite(x):
        raise ValueError("non-finite value in export")
    if x == 0:
        return "0"
    ax = abs(float(x))
    if 1e-4 <= ax < 1e7:
        return np.format_float_positional(x, unique=True, trim="-")
    return np.format_float_scientific(x, unique=True, trim="-")


class Raw:
    def __init__(self, text):
        self.text = text


def tensor(t):
    a = t.detach().cpu().to(torch.float32).numpy()
    return {"shape": list(a.shape), "data": Raw("[" + ",".join(fmt_f32(v) for v in a.reshape(-1)) + "]")}


def dumps(doc):
    raws = []

    def strip(o):
        if isinstance(o, Raw):
            raws.append(o.text)
            return "@@RAW%d@@" % (len(raws) - 1)
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items()}
        if isinstance(o, list):
            if all(isinstance(v, (str, int, float, bool)) for v in o):   # short lists on one line
                return strip(Raw(json.dumps(o, ensure_ascii=False)))
            return [strip(v) for v in o]
        return o

    text = json.dumps(strip(doc), indent=1, ensure_ascii=False)
    for i, r in enumerate(raws):
        text = text.replace('"@@RAW%d@@"' % i, r, 1)
    return text + "\n"


# ----------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------

def export(task, model, info, out_dir, n_examples, seed):
    V, E, H, T = len(task.vocab), task.embed_dim, task.num_heads, task.seq_len
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}

    # Reference outputs: the same model in float64 from the stored float32 params.
    ref = TinyTransformer(V, E, H, task.bias, T).double()
    ref.load_state_dict({k: v.double() for k, v in sd.items()})
    ref.pe = positional_encoding(T, E).double()      # the stored float32 pe, in float64
    # (Train mode on purpose: there is no dropout, so it computes the same as eval mode, and
    # torch 1.13's eval-mode fast path fails for bias=False and is not the reference code path.)
    rng = random.Random(seed)
    examples = []
    for _ in range(n_examples):
        toks, tgts, scored = task.sample(rng)
        with torch.no_grad():
            logits, a, w = ref(torch.tensor([toks]), need_weights=True)
        pred = logits[0].argmax(-1).tolist()
        examples.append({
            "tokens": toks,
            "text": " ".join(task.vocab[i] for i in toks),
            "targets": tgts,
            "scored_positions": scored,
            "predicted": pred,
            "attn_output": tensor(a[0]),          # (T, E): MHA output, before the residual
            "attn_weights": tensor(w[0]),         # (H, T, T): per-head weights
            "logits": tensor(logits[0]),          # (T, V)
        })

    mha_sd = {k[len("attn."):]: tensor(v) for k, v in sd.items() if k.startswith("attn.")}
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "task": task.name,
        "description": task.description,
        "vocab": task.vocab,
        "config": {
            "vocab_size": V, "embed_dim": E, "num_heads": H, "head_dim": E // H, "seq_len": T,
            "bias": task.bias, "causal": task.causal, "batch_first": True,
            "scored_positions": "all" if task.name == "reverse" else list(range(Recall.n_pairs, T)),
            "model": [
                "x = embedding.weight[tokens] + positional_encoding   (T, E)",
                "a = MultiheadAttention(x, x, x)   nn.MultiheadAttention(E, H, bias=config.bias, batch_first=True), no mask",
                "h = x + a   residual; no LayerNorm, no feed-forward block",
                "logits = h @ readout.weight^T + readout.bias   (T, V); the answer is argmax",
            ],
            "positional_encoding": ("fixed: pe[t, 2i] = sin(t / 10000^(2i/E)), pe[t, 2i+1] = cos(t / 10000^(2i/E)); "
                                    "evaluated in float64, stored as float32 in positional_encoding"),
            "same_as": "tests/fixtures/torch-grad/README.md, kind train_step" + (
                " (identical sizes and no biases)" if task.name == "reverse" else " (other sizes, with biases)"),
        },
        "mha": {"embed_dim": E, "num_heads": H, "bias": task.bias, "batch_first": True, "state_dict": mha_sd},
        "params": {
            "embedding.weight": tensor(sd["embedding.weight"]),
            "readout.weight": tensor(sd["readout.weight"]),
            "readout.bias": tensor(sd["readout.bias"]),
        },
        "positional_encoding": tensor(positional_encoding(T, E)),
        "training": info,
        "examples": examples,
        "tolerance": {"atol": 1e-4, "rtol": 1e-4,
                      "note": "reference = float64 forward of the stored float32 params; float32 runs agree to ~1e-6"},
    }
    text = dumps(doc)
    back = json.loads(text)
    for name, t in back["mha"]["state_dict"].items():   # bit-exact round trip
        assert np.array_equal(np.array(t["data"], dtype=np.float32),
                              sd["attn." + name].numpy().reshape(-1)), name
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"toy-{task.name}.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    size = len(text.encode("utf-8"))
    print(f"  wrote {os.path.relpath(path, ROOT)} ({size / 1000:.1f} kB)")
    if size > MAX_BYTES:
        sys.exit(f"error: {path} is {size} bytes, over the {MAX_BYTES} byte budget")


SETTINGS = {   # seed, steps, batch, lr
    "reverse": (1234, 3000, 128, 1e-2),
    "recall": (4321, 3000, 128, 5e-3),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "web", "demo", "models"))
    ap.add_argument("--task", default="all", choices=["all"] + list(TASKS))
    ap.add_argument("--eval", type=int, default=10_000, help="fresh examples for the accuracy check")
    args = ap.parse_args()
    failed = []
    for name in (TASKS if args.task == "all" else [args.task]):
        task = TASKS[name]
        seed, steps, bs, lr = SETTINGS[name]
        print(f"training {name}: V {len(task.vocab)}, T {task.seq_len}, E {task.embed_dim}, "
              f"H {task.num_heads}, bias {task.bias}; {steps} Adam steps, batch {bs}")
        model, loss, secs = train(task, seed, steps, bs, lr)
        round_params(model)
        acc, seq_acc = accuracy(model, task, random.Random(seed + 99), args.eval)
        print(f"  trained in {secs:.1f} s")
        print(f"  after rounding to 4 decimals: answer accuracy {acc:.4f}, whole-example accuracy "
              f"{seq_acc:.4f} on {args.eval} fresh examples")
        info = {"seed": seed, "steps": steps, "batch_size": bs, "optimizer": "Adam",
                "lr": lr, "lr_schedule": "cosine to 5% of lr", "final_loss": round(loss, 5),
                "torch_version": torch.__version__,
                "eval_examples": args.eval, "answer_accuracy": round(acc, 5),
                "example_accuracy": round(seq_acc, 5),
                "weights": "rounded to 4 decimals after training, then float32"}
        export(task, model, info, args.out, n_examples=4, seed=seed + 7)
        if acc < 0.95:
            failed.append(f"{name}: accuracy {acc:.4f} < 0.95")
    if failed:
        sys.exit("error: " + "; ".join(failed))


if __name__ == "__main__":
    main()
