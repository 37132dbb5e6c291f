#!/usr/bin/env bash
# Reproduces the poem model web/demo/models/tang-song-quatrains-char-llama/ (docs/poem-model.md) from nothing but
# npm and this repository:
#   1. scripts/poems/prepare.mjs: fetch chinese-poetry 2.0.1 (MIT) with npm into the cache, select the Tang and Song
#      quatrains, convert them to simplified characters (opencc-js), split, tokenise, write the token files and the
#      tokenizer (checked with @huggingface/tokenizers);
#   2. build attnlab_train_poems (native, Release) and train with attnlab's engine (the flags below: seed, size,
#      schedule), logging losses.csv;
#   3. copy the Hugging Face folder into the model folder: config.json, model.safetensors (F16), tokenizer.json,
#      tokenizer_config.json, losses.csv, summary.json (README.md, the model card, is written by hand from them);
#   4. scripts/poems/snapshots.mjs: the weights saved at the snapshot steps, run on the page's probes, into
#      snapshots.json (needs dist/, built by scripts/build.sh).
#
#   bash scripts/poems/train.sh [--out DIR] [--build DIR] [--cache DIR] [-- extra trainer flags]
#
# Defaults: --out web/demo/models/tang-song-quatrains-char-llama, --build build/native, --cache ~/.cache/attnlab.
# The trainer runs on 2 threads under `nice`; the run log goes to <cache>/poems/run/train.log.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=web/demo/models/tang-song-quatrains-char-llama
build=build/native
cache=${ATTNLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab}
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "train.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
data=$cache/poems/data
run=$cache/poems/run

# The model: Llama family (RMSNorm, RoPE, SwiGLU, tied embeddings), E 128, 4 layers, 4 heads of 32, MLP 352;
# 48 whole poems a batch, 2 to a row ([BOS] a [EOS] [BOS] b [EOS]), 6000 steps of AdamW (lr 3e-3 after 300 warm-up
# steps, cosine to 3e-4, weight decay 0.1, betas (0.9, 0.99), clip 1.0), seed 1.
model_flags=(--arch llama --embed 128 --layers 4 --heads 4 --hidden 352 --seed 1 --batch 48 --poems-per-row 2 --steps 6000
  --lr 3e-3 --warmup 300 --min-lr-ratio 0.1 --weight-decay 0.1 --beta1 0.9 --beta2 0.99 --clip 1.0
  --log-every 50 --eval-every 500 --eval-poems 1000 --threads 2)
# Weights saved on the way (they do not change the run): the page's view of the run from inside.
snapshot_flags=(--snapshot-steps 0,25,50,100,200,300,500,1000,1500,2000,3000,4000,5000,6000)

if [ -f "$data/stats.json" ]; then
  echo "train.sh: using the prepared data in $data (delete it to prepare again)" >&2
else
  node scripts/poems/prepare.mjs --cache "$cache" > /dev/null
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  nice cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=OFF
fi
nice cmake --build "$build" -j2 --target attnlab_train_poems
mkdir -p "$run"
echo "train.sh: training (log: $run/train.log) …" >&2
nice "$build/attnlab_train_poems" --data "$data" --out "$run" "${model_flags[@]}" "${snapshot_flags[@]}" "${extra[@]}" |
  tee "$run/train.log"
mkdir -p "$out"
cp "$run/config.json" "$run/model.safetensors" "$run/losses.csv" "$run/summary.json" "$out/"
cp "$data/tokenizer.json" "$data/tokenizer_config.json" "$out/"
node scripts/poems/snapshots.mjs --run "$run" --model "$out"
echo "train.sh: wrote $out (the model card README.md is not regenerated)" >&2
