#!/usr/bin/env bash
# Where attnlab's native forward spends its CPU time, by function (Linux perf, software clock: works in VMs without
# hardware counters). Runs the native model program (cpp/bench/model_bench.cc) on the bench's checkpoint, attaches
# perf after the weights are loaded, sends it the commands, and sums the samples into GEMM / attention / output
# allocation and copies / the rest. Samples count CPU time only, so the split holds on a busy machine too.
#   bash scripts/bench/model/perf-native.sh [COMMANDS [SETUP]]   e.g. "threads 1;prefill 512 1;prefill 512 1"
# SETUP runs before perf attaches (e.g. "threads 1;fill a 992" before "steps a 32"). Default: three T = 512 prefills with every attention at one thread. BENCH_MODEL_NATIVE_BIN: the program
# (default build/native/attnlab_model_bench; scripts/bench/model/run.sh builds it). Output: build/bench/perf-native.txt.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${BENCH_MODEL_NATIVE_BIN:-build/native/attnlab_model_bench}
cmds=${1:-threads 1;prefill 512 1;prefill 512 1;prefill 512 1}
setup=${2:-}
dir=${BENCH_MODEL_DIR:-build/bench/gpt2-small}
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
[ -x "$bin" ] || { echo "missing $bin (scripts/bench/model/run.sh builds it)" >&2; exit 1; }
tokens=build/bench/model-tokens.bin
[ -f $tokens ] || node --input-type=module -e "
  import fs from 'node:fs'; import { tokenIds, readConfig } from './scripts/bench/model/common.mjs';
  fs.writeFileSync('$tokens', new Uint8Array(tokenIds(readConfig().n_positions, readConfig().vocab_size).buffer));"
source scripts/bench/heap-env.sh
work=$(mktemp -d)
mkfifo "$work/in"
exec 3<>"$work/in"
"$bin" --model "$dir" --tokens $tokens --serve <&3 >"$work/answers" 2>/dev/null &
pid=$!
until grep -q ready "$work/answers" 2>/dev/null; do sleep 0.5; done
if [ -n "$setup" ]; then
  IFS=';' read -ra list <<<"$setup"
  for c in "${list[@]}"; do echo "$c" >&3; done
  until [ "$(wc -l <"$work/answers")" -gt "${#list[@]}" ]; do sleep 0.5; done
fi
perf record -e cpu-clock -F 999 -p $pid -o "$work/perf.data" 2>/dev/null &
perf_pid=$!
sleep 1
IFS=';' read -ra list <<<"$cmds"
for c in "${list[@]}"; do echo "$c" >&3; done
echo quit >&3
wait $pid
kill -INT $perf_pid 2>/dev/null || true
wait $perf_pid 2>/dev/null || true
out=build/bench/perf-native.txt
{
  echo "# perf-native.sh: $cmds (after: $setup)"
  cat "$work/answers"
  perf report -i "$work/perf.data" --stdio --no-children --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' |
    awk '{ pct = $1; sub(/%/, "", pct); $1 = ""; $2 = ""; name = $0
           if (name ~ /Attend|RunPackedHead|Softmax|Decode|Head/) c = "attention"
           else if (name ~ /Gemm|Gemv|Pack|Panel|Linear/) c = "GEMM (decoding: GEMV in Linear)"
           else if (name ~ /memset|memmove|memcpy|fill_assign|clear_page|page_fault|alloc|free/) c = "output allocation and copies"
           else if (name ~ /Norm|Gelu|Mlp|Rope|Embed|AddRows|TransformerForward/) c = "norms, GELU, embeddings, residuals"
           else c = "other (kernel, runtime)"
           sum[c] += pct; if (pct >= 0.2) printf "%7.2f%%  %-36s %s\n", pct, c, substr(name, 1, 110) }
         END { print "\nby kind:"; for (c in sum) printf "%7.2f%%  %s\n", sum[c], c }'
} >$out
rm -rf "$work"
cat $out
