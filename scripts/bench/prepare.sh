# Sourced by run.sh and model/run.sh, from the repository root, with the dist/ files the benchmark needs as
# arguments: installs the peer libraries of scripts/bench/package.json (again only when its lock file changed), runs
# scripts/build.sh unless BENCH_SKIP_BUILD=1, then checks that those files exist.
if [ ! -f scripts/bench/node_modules/.package-lock.json ] ||
  [ scripts/bench/package-lock.json -nt scripts/bench/node_modules/.package-lock.json ]; then
  echo "== npm ci (scripts/bench)"
  # onnxruntime-node's install script would try to download GPU binaries; its CPU binary ships in the package.
  (cd scripts/bench && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "== bash scripts/build.sh"
  bash scripts/build.sh
fi
for f in "$@"; do
  [ -f "$f" ] || { echo "missing $f: run bash scripts/build.sh" >&2; exit 1; }
done
