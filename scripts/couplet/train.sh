#!/usr/bin/env bash
# Trains the couplet model (docs/couplet-model.md, "The model") from nothing but npm and this repository:
#   1. scripts/couplet/prepare.mjs: the Song (train, validation) and Tang (test) pairs and the tokenizer, from
#      chinese-poetry 2.0.1 (MIT) fetched with npm into the cache;
#   2. build attnlab_train_couplet (native, Release) and train a marian with attnlab's engine (the flags below: seed,
#      size, schedule), logging losses.csv and writing the weight snapshots;
#   3. copy the Hugging Face folder (config.json, model.safetensors in F16, tokenizer.json, tokenizer_config.json,
#      losses.csv, summary.json) into --out.
#
#   bash scripts/couplet/train.sh [--out DIR] [--build DIR] [--cache DIR] [-- extra trainer flags]
#
# Defaults: --out <cache>/couplet/model, --build build/native, --cache ~/.cache/attnlab. The trainer runs on two
# threads under `nice`; the run log goes to <cache>/couplet/run/train.log.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build/native
cache=${ATTNLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab}
out=
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
out=${out:-$cache/couplet/model}
data=$cache/couplet/data
run=$cache/couplet/run

# The model: T5 (RMSNorm, bucketed relative positions, gated-GELU MLP, tied embeddings), d_model 128, 3 encoder and
# 3 decoder blocks, 4 heads of 32, MLP 384, 8 buckets up to distance 16; 64 pairs a batch (one line length each),
# 6000 steps of AdamW (lr 2e-3 after 200 warm-up steps, cosine to 2e-4, weight decay 0.1, betas (0.9, 0.99),
# clip 1.0), seed 1.
model_flags=(--arch marian --embed 128 --layers 3 --decoder-layers 3 --heads 4 --hidden 384 --act swish
  --seed 1 --batch 64 --steps 8000 --lr 1e-3 --warmup 200 --min-lr-ratio 0.1 --weight-decay 0.1 --beta1 0.9
  --beta2 0.99 --clip 1.0 --log-every 50 --eval-every 500 --eval-pairs 4000 --threads 2
  --snapshots 0,100,200,400,800,1600,3200,6400)

if [ -f "$data/stats.json" ]; then
  echo "train.sh: using the prepared data in $data (delete it to prepare again)" >&2
else
  node scripts/couplet/prepare.mjs --cache "$cache" > /dev/null
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  nice cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=OFF
fi
nice cmake --build "$build" -j2 --target attnlab_train_couplet
mkdir -p "$run"
echo "train.sh: training (log: $run/train.log) …" >&2
nice "$build/attnlab_train_couplet" --data "$data" --out "$run" "${model_flags[@]}" "${extra[@]}" | tee "$run/train.log"
mkdir -p "$out"
cp "$run/config.json" "$run/model.safetensors" "$run/tokenizer.json" "$run/tokenizer_config.json" \
  "$run/losses.csv" "$run/summary.json" "$out/"
echo "train.sh: wrote $out" >&2
