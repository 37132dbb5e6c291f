#!/usr/bin/python3
"""Writes tests/fixtures/hf/: Hugging Face attention layers as .safetensors files, with the expected outputs.

The layers are built here in PyTorch with the module names of Hugging Face's modeling code (BertModel,
GPT2Model, ViTModel and the heads that wrap them), so state_dict() gives the names of a real checkpoint, with
random weights and several sizes. Nothing is downloaded. Each case <name> gives:

  <name>.safetensors  the whole (small) model's state dict, including tensors the mapping must ignore
                      (LayerNorms, an I64 position_ids, GPT-2's U8 causal-mask buffer), in F32, F16 or BF16
  <name>.json         { arch, layer, numHeads, prefix | null, causal, input {data, shape} (B, L, E),
                        output {data, shape} (B, L, E), weights {data, shape} (B, H, L, L), tolerance }

The expected values are the attention block of layer `layer` (projections, softmax(q kᵀ / √d), output
projection; no residual, no LayerNorm) in float64 from the stored (rounded) weights, cast to float32.

dtypes.safetensors holds F16 and BF16 tensors of many bit patterns (every 4th one, plus the edge cases) next to
PyTorch's own float32 conversions of them (<name>_as_f32), for readSafetensors' exactness test.

Run with Debian's python3 (python3-torch): /usr/bin/python3 scripts/make_hf_fixtures.py
"""
import json
import math
import os
import sys

import torch
from torch import nn

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')
sys.path.insert(0, FIXTURES)
import safetensors_io  # noqa: E402  (tests/fixtures/safetensors_io.py)

OUT = os.path.join(FIXTURES, 'hf')
TOLERANCE = {'atol': 1e-5, 'rtol': 1e-4}


# ---- Hugging Face-named modules (only what gives the state-dict names; forward is computed below) -------------

class Named(nn.Module):
    def __init__(*args, **children):  # no named `self`: BERT has a child called 'self'
        module = args[0]
        super(Named, module).__init__()
        for name, child in children.items():
            setattr(module, name, child)


class Conv1D(nn.Module):
    """GPT-2's Conv1D: y = x · weight + bias with weight (in_features, out_features)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))


def bert_like(e, layers, self_name):
    """BERT (self_name 'self') or ViT (self_name 'attention') encoder layers."""
    def layer():
        attention = Named(**{self_name: Named(query=nn.Linear(e, e), key=nn.Linear(e, e), value=nn.Linear(e, e))},
                          output=Named(dense=nn.Linear(e, e), LayerNorm=nn.LayerNorm(e)))
        return Named(attention=attention, intermediate=Named(dense=nn.Linear(e, 2 * e)))
    return Named(encoder=Named(layer=nn.ModuleList([layer() for _ in range(layers)])))


def gpt2(e, layers):
    def block():
        return Named(ln_1=nn.LayerNorm(e), attn=Named(c_attn=Conv1D(e, 3 * e), c_proj=Conv1D(e, e)))
    return Named(h=nn.ModuleList([block() for _ in range(layers)]), ln_f=nn.LayerNorm(e))


def randomize(model, gen):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)


# ---- the reference ---------------------------------------------------------------------------------------------

def attend(q, k, v, heads, causal):
    """(B, L, E) → context (B, L, E), weights (B, H, L, L): softmax(q kᵀ / √d) per head."""
    b, l, e = q.shape
    d = e // heads

    def split(t):
        return t.view(b, l, heads, d).transpose(1, 2)

    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(~torch.ones(l, l, dtype=torch.bool).tril(), float('-inf'))
    weights = scores.softmax(-1)
    return (weights @ split(v)).transpose(1, 2).reshape(b, l, e), weights


def reference(arch, sd, base, x, heads):
    w = {k: v.double() for k, v in sd.items() if v.is_floating_point()}
    if arch == 'gpt2':
        q, k, v = (x @ w[base + 'c_attn.weight'] + w[base + 'c_attn.bias']).split(x.shape[-1], dim=2)
        ctx, weights = attend(q, k, v, heads, causal=True)
        return ctx @ w[base + 'c_proj.weight'] + w[base + 'c_proj.bias'], weights
    inner = 'self.' if arch == 'bert' else 'attention.'
    proj = [nn.functional.linear(x, w[f'{base}{inner}{n}.weight'], w[f'{base}{inner}{n}.bias'])
            for n in ('query', 'key', 'value')]
    ctx, weights = attend(*proj, heads, causal=False)
    return nn.functional.linear(ctx, w[base + 'output.dense.weight'], w[base + 'output.dense.bias']), weights


def tensor_json(t):
    return {'data': [float(v) for v in t.float().flatten().tolist()], 'shape': list(t.shape)}


CASES = [
    # name, arch, wrapper prefix ('' = bare model), E, heads, layers, layer, B, L, dtype, seed
    ('bert_e16_h4', 'bert', 'bert.', 16, 4, 2, 1, 2, 5, torch.float32, 1),
    ('bert_bare_e24_h3_f16', 'bert', '', 24, 3, 1, 0, 1, 7, torch.float16, 2),
    ('gpt2_e16_h2', 'gpt2', 'transformer.', 16, 2, 2, 1, 2, 6, torch.float32, 3),
    ('gpt2_bare_e8_h1_bf16', 'gpt2', '', 8, 1, 1, 0, 1, 4, torch.bfloat16, 4),
    ('vit_e32_h4', 'vit', 'vit.', 32, 4, 3, 2, 2, 9, torch.float32, 5),
]


def make_case(name, arch, prefix, e, heads, layers, layer, b, l, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    model = gpt2(e, layers) if arch == 'gpt2' else bert_like(e, layers, 'self' if arch == 'bert' else 'attention')
    randomize(model, gen)
    sd = {prefix + k: v.to(dtype) for k, v in model.state_dict().items()}
    if arch == 'bert':
        sd[prefix + 'embeddings.position_ids'] = torch.arange(l, dtype=torch.int64).view(1, l)
    if arch == 'gpt2':
        sd[f'{prefix}h.0.attn.bias'] = torch.ones(l, l, dtype=torch.uint8).tril().view(1, 1, l, l)
    base = prefix + (f'h.{layer}.attn.' if arch == 'gpt2' else f'encoder.layer.{layer}.attention.')
    x = (torch.randn(b, l, e, generator=gen) * 0.5).float()
    out, weights = reference(arch, sd, base, x.double(), heads)
    safetensors_io.write(os.path.join(OUT, name + '.safetensors'), sd, {'format': 'pt'})
    case = {'arch': arch, 'layer': layer, 'numHeads': heads, 'prefix': prefix or None, 'causal': arch == 'gpt2',
            'input': tensor_json(x), 'output': tensor_json(out), 'weights': tensor_json(weights),
            'tolerance': TOLERANCE}
    with open(os.path.join(OUT, name + '.json'), 'w') as f:
        json.dump(case, f, separators=(',', ':'))


def make_dtypes():
    specials = [0x0001, 0x0002, 0x0003, 0x03FF, 0x7BFF, 0x7C01, 0x7E00, 0x7FFF, 0x8001, 0x83FF, 0xFBFF, 0xFFFF]
    patterns = torch.tensor(list(range(0, 0x10000, 4)) + specials, dtype=torch.int32).to(torch.int16)
    f16 = patterns.view(torch.float16)
    bf16 = patterns.view(torch.bfloat16)
    tensors = {'f16': f16, 'f16_as_f32': f16.float(), 'bf16': bf16, 'bf16_as_f32': bf16.float(),
               'f32': torch.tensor([0.0, -0.0, 1.5, -2.25, 1e-45, 3.4e38, float('inf'), float('-inf'), float('nan')])}
    safetensors_io.write(os.path.join(OUT, 'dtypes.safetensors'), tensors)


def main():
    os.makedirs(OUT, exist_ok=True)
    for case in CASES:
        make_case(*case)
    make_dtypes()
    print('wrote', len(CASES), 'cases and dtypes.safetensors to', os.path.normpath(OUT))


if __name__ == '__main__':
    main()
