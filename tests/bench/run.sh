#!/usr/bin/env bash
# The kernel benchmark (./build_wasm.sh bench): the native kernel (attn_bench) beside NumPy + OpenBLAS,
# then ONE headless Chromium run: our backends beside onnxruntime-web and tfjs-backend-wasm, and the
# app's frame time, first frame and size. Prints the table (stdout) and writes tests/bench/out/results.json.
# Installs what it needs when missing: the peers (tests/bench/node_modules), playwright-core (repo
# root), OpenBLAS (Debian's libopenblas0-serial, unpacked into .cache/openblas: no system change).
# Environment: BENCH_QUICK=1 (fewer shapes, ~2 min), BENCH_SKIP_SITE=1 (use dist/ as it is), BENCH_SKIP_MODELS=1,
# BENCH_MODEL_ROOT (where the model benchmark writes its folders, default /tmp/attn-bench-models),
# OPENBLAS_CORETYPE (else chosen from /proc/cpuinfo: OpenBLAS 0.3.21 does not know newer Xeons).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
export NODE_PATH=/usr/share/nodejs
OUT=tests/bench/out
NATIVE_DIR=build/native
mkdir -p "$OUT"
log() { echo "[bench] $*" >&2; }
start=$(date +%s)
QUICK="${BENCH_QUICK:-0}"
[ "${1:-}" = "--quick" ] && QUICK=1
if [ "$QUICK" = 1 ]; then
  SHAPES=(--T 64,1024 --d 64); MIN_MS=150
else
  SHAPES=(--T 64,256,1024,2048 --d 64,512); MIN_MS=300
fi
log "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (timings on a loaded machine are noisy)"

# -- packages ------------------------------------------------------------------------------------
[ -d node_modules/playwright-core ] || bash tools/install_deps.sh --npm
if [ ! -d tests/bench/node_modules/onnxruntime-web ] || [ ! -d tests/bench/node_modules/@tensorflow/tfjs-backend-wasm ] ||
   [ ! -d tests/bench/node_modules/onnx-proto ]; then
  log "installing the peers (onnxruntime-web, tfjs, onnx-proto) into tests/bench/node_modules"
  (cd tests/bench && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
python_ok=1
/usr/bin/python3 -c "import numpy" 2>/dev/null || python_ok=0
if [ "$python_ok" = 0 ] && command -v apt-get >/dev/null; then
  log "installing python3-numpy"
  apt-get install -y --no-install-recommends python3-numpy >&2 && python_ok=1
fi

# OpenBLAS for NumPy, without switching the system's BLAS: the serial (one-thread) build unpacked
# under .cache and put first on LD_LIBRARY_PATH for the NumPy run only.
OPENBLAS_DIR=.cache/openblas
OPENBLAS_LIB="$OPENBLAS_DIR/root/usr/lib/x86_64-linux-gnu/openblas-serial"
if [ "$python_ok" = 1 ] && [ ! -f "$OPENBLAS_LIB/libblas.so.3" ]; then
  log "fetching Debian's libopenblas0-serial into $OPENBLAS_DIR"
  mkdir -p "$OPENBLAS_DIR"
  (cd "$OPENBLAS_DIR" && rm -f ./*.deb && apt-get download libopenblas0-serial >&2 2>/dev/null &&
   dpkg -x libopenblas0-serial_*.deb root) || log "could not fetch OpenBLAS: NumPy runs with the system BLAS"
fi
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
  case "$flags" in
    *avx512_bf16*) export OPENBLAS_CORETYPE=Cooperlake ;;
    *avx512f*) export OPENBLAS_CORETYPE=SkylakeX ;;
    *avx2*) export OPENBLAS_CORETYPE=Haswell ;;
  esac
fi

# -- native: our kernel, then NumPy --------------------------------------------------------------
log "building attn_bench in $NATIVE_DIR"
imgui="$(tools/fetch_imgui.sh 2>/dev/null || true)"
cmake -S . -B "$NATIVE_DIR" -DCMAKE_BUILD_TYPE=Release ${imgui:+-DIMGUI_DIR="$imgui"} >&2
cmake --build "$NATIVE_DIR" -j "$(nproc)" --target attn_bench >&2
log "native kernels"
"$NATIVE_DIR/attn_bench" "${SHAPES[@]}" --backend simd,eigen,scalar --min-ms "$MIN_MS" > "$OUT/native.jsonl"
MATMUL_T=16,64,256
[ "$QUICK" = 1 ] && MATMUL_T=16,256
log "native matmul (GPT-2 small's shapes)"
"$NATIVE_DIR/attn_bench" --matmul --T "$MATMUL_T" --backend simd,eigen --min-ms "$MIN_MS" > "$OUT/native_matmul.jsonl"
: > "$OUT/numpy_matmul.jsonl"
: > "$OUT/numpy.jsonl"
if [ "$python_ok" = 1 ]; then
  log "NumPy (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto})"
  LD_LIBRARY_PATH="$PWD/$OPENBLAS_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    /usr/bin/python3 tests/bench/numpy_bench.py "${SHAPES[@]}" --min-ms "$MIN_MS" > "$OUT/numpy.jsonl" ||
    log "NumPy failed: no NumPy column"
  LD_LIBRARY_PATH="$PWD/$OPENBLAS_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    /usr/bin/python3 tests/bench/numpy_bench.py --matmul --T "$MATMUL_T" --min-ms "$MIN_MS" > "$OUT/numpy_matmul.jsonl" ||
    log "NumPy matmul failed: no NumPy column"
fi

log "native matmul with 16-bit weights (F32 vs F16 vs BF16 on GPT-2's, SmolLM2's and Qwen3's shapes)"
M16_T=1,16,64,256
[ "$QUICK" = 1 ] && M16_T=16,64
"$NATIVE_DIR/attn_bench" --matmul16 --T "$M16_T" --min-ms 200 | tee "$OUT/native_matmul16.txt"
log "native forward of SmolLM2-135M's and Qwen3-0.6B's shapes (random weights; where the time goes)"
if [ "$QUICK" = 1 ]; then FWD=(--models smollm2 --dtype BF16 --T 64 --reps 2); else FWD=(--models smollm2,qwen3 --dtype BF16,F32 --T 64,256 --reps 3); fi
"$NATIVE_DIR/attn_bench" --forward "${FWD[@]}" | tee "$OUT/native_forward.txt"
log "native interventions on GPT-2 small's shape: reruns from a late layer, attribution, the sweeps"
if [ "$QUICK" = 1 ]; then IV=(--T 16 --reps 1); else IV=(--T 16,64 --reps 3); fi
"$NATIVE_DIR/attn_bench" --interventions "${IV[@]}" | tee "$OUT/native_interventions.txt"

# -- the site, then the browser ------------------------------------------------------------------
if [ "${BENCH_SKIP_SITE:-0}" != 1 ] || [ ! -f dist/index.html ]; then
  log "building the site (./build_wasm.sh site)"
  ./build_wasm.sh site >&2
fi
# -- the wasm matmul under node, in CPU time: ours (attn_bench's wasm build) and onnxruntime-web's --
: > "$OUT/node_matmul.jsonl"
if [ -f build/web/CMakeCache.txt ] && cmake --build build/web -j "$(nproc)" --target attn_bench >&2; then
  log "wasm matmul under node (CPU time): ours and onnxruntime-web"
  node build/web/attn_bench.js --matmul --T "$MATMUL_T" --backend simd --min-ms "$MIN_MS" >> "$OUT/node_matmul.jsonl" ||
    log "attn_bench.js failed: no node matmul rows for ours"
  node tests/bench/ort_node_matmul.mjs --T "$MATMUL_T" --min-ms "$MIN_MS" >> "$OUT/node_matmul.jsonl" ||
    log "onnxruntime-web under node failed: no node matmul rows for ORT"
else
  log "no wasm build in build/web: the node matmul table is skipped"
fi
log "headless Chromium"
quick_flag=()
[ "$QUICK" = 1 ] && quick_flag=(--quick)
node tests/bench/bench.mjs --dist dist --native "$OUT/native.jsonl" --numpy "$OUT/numpy.jsonl" \
  --native-matmul "$OUT/native_matmul.jsonl" --numpy-matmul "$OUT/numpy_matmul.jsonl" --node-matmul "$OUT/node_matmul.jsonl" \
  --out "$OUT/results.json" "${quick_flag[@]}"
# -- attn_bench in the page: the 16-bit matmul against F32 and the forward's profile, in Chromium ---
if [ -f build/web/libattn_core.a ]; then
  log "attn_bench built for the web, in headless Chromium (16-bit matmul vs F32; the forward's profile)"
  node tests/bench/wasm_page_bench.mjs --web-dir build/web --out "$OUT/results.json" "${quick_flag[@]}" ||
    log "the page's attn_bench failed: no page matmul16 / forward tables"
else
  log "no wasm build in build/web: the page's attn_bench tables are skipped"
fi
# -- models: SmolLM2-135M's and Qwen3-0.6B's shapes loaded from files in the page, the forward, the
# wasm memory against the file (BENCH_SKIP_MODELS=1: skip). The folders (up to 1.2 GB) are written
# under BENCH_MODEL_ROOT (default /tmp/attn-bench-models) and deleted after.
if [ "${BENCH_SKIP_MODELS:-0}" != 1 ]; then
  log "models in headless Chromium (SmolLM2-135M's and Qwen3-0.6B's shapes, random weights)"
  node tests/bench/model_bench.mjs --dist dist --out "$OUT/results.json" --model-root "${BENCH_MODEL_ROOT:-/tmp/attn-bench-models}" \
    "${quick_flag[@]}" || log "the model benchmark failed: no model rows"
fi
# -- the train view: frame time while a model trains in the page (BENCH_SKIP_TRAIN=1: skip) ---------
if [ "${BENCH_SKIP_TRAIN:-0}" != 1 ]; then
  log "train view in headless Chromium (per-frame CPU time while training)"
  node tests/bench/train_bench.mjs --dist dist --out "$OUT/results.json" "${quick_flag[@]}" ||
    log "the train benchmark failed: no train rows"
fi
# -- a phone: each view's frame time and the wasm heap at 390×844, DPR 3 (BENCH_SKIP_PHONE=1: skip) --
if [ "${BENCH_SKIP_PHONE:-0}" != 1 ]; then
  log "phone 390x844 DPR 3 in headless Chromium (frame time per view, wasm heap)"
  node tests/bench/phone_bench.mjs --dist dist --out "$OUT/results.json" "${quick_flag[@]}" ||
    log "the phone benchmark failed: no phone rows"
fi
log "done in $(( $(date +%s) - start )) s"
