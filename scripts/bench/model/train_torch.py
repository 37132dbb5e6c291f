"""PyTorch's side of the training benchmark (train.mjs): the reference LlamaForCausalLM of
tests/fixtures/models/reference.py (Hugging Face's modeling_llama.py step by step, float32) trained with
F.cross_entropy, clip_grad_norm_ and torch.optim.AdamW, as attnlab's Transformer::TrainStep does.

    python3 train_torch.py --config CONFIG.json --tokens FILE

FILE: int32 little-endian token ids. Prints {"ready": ...}, then answers one command per stdin line with one JSON
line (the protocol of cpp/bench/model_bench.cc's --train mode):
    threads N       torch.set_num_threads(N)
    train B T N     N training steps on B rows of T tokens (row r of step s: ids from (s*B + r)*(T + 1), targets
                    shifted by one, the ids reused cyclically) -> {"ms": [...], "cpuMs": [...], "loss": [...]}
                    (cpuMs: the process's CPU time, every thread)
    quit
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "models"))
from reference import build_model, normalise_config  # noqa: E402

# The optimiser of model_bench.cc's `train` (Transformer::AdamWOptions defaults, lr 1e-4, clip 1).
LR, WEIGHT_DECAY, BETAS, EPS, CLIP = 1e-4, 0.01, (0.9, 0.999), 1e-8, 1.0


class Trainer:
    def __init__(self, config, ids):
        torch.manual_seed(1)
        self.model = build_model(normalise_config(config)).float()
        with torch.no_grad():  # initialised as attnlab's Transformer: normal(0, 0.02) matrices, norms 1
            for p in self.model.parameters():
                if p.dim() >= 2:
                    p.normal_(0.0, 0.02)
                else:
                    p.fill_(1.0)
        self.model.train()
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        # nanoGPT's groups, as attnlab: weight decay on >= 2-D tensors only
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                      {"params": no_decay, "weight_decay": 0.0}], lr=LR, betas=BETAS, eps=EPS)
        self.ids = ids
        self.next_row = 0
        self.parameters = sum(p.numel() for p in self.model.parameters())

    def batch(self, B, T):
        rows = self.ids.numel() // (T + 1)
        starts = [((self.next_row + r) % rows) * (T + 1) for r in range(B)]
        self.next_row += B
        seqs = torch.stack([self.ids[s:s + T + 1] for s in starts]).long()
        return seqs[:, :-1].contiguous(), seqs[:, 1:].contiguous()

    def train(self, B, T, n):
        ms, cpu, losses = [], [], []
        for _ in range(n):
            x, y = self.batch(B, T)
            c0, t0 = time.process_time(), time.perf_counter()
            self.opt.zero_grad(set_to_none=True)
            logits = self.model(x)["logits"]
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), CLIP)
            self.opt.step()
            ms.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
            losses.append(float(loss))
        return {"ms": ms, "cpuMs": cpu, "loss": losses}

    def command(self, line):
        words = line.split()
        if words[0] == "threads":
            torch.set_num_threads(int(words[1]))
            return {"threads": torch.get_num_threads()}
        if words[0] == "train":
            return self.train(*map(int, words[1:4]))
        raise ValueError("unknown command: " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--tokens", required=True)
    args = ap.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    with open(args.tokens, "rb") as f:
        ids = torch.frombuffer(bytearray(f.read()), dtype=torch.int32)
    trainer = Trainer(config, ids)
    print(json.dumps({"ready": True, "torch": torch.__version__, "parameters": trainer.parameters,
                      "blas": "BLAS_INFO=" + torch.__config__.show().split("BLAS_INFO=")[1].split(",")[0]}),
          flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if line == "quit":
            break
        try:
            answer = trainer.command(line)
        except Exception as e:  # noqa: BLE001 (any failure is the driver's to report)
            answer = {"error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
