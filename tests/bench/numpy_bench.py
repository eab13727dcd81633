"""NumPy + OpenBLAS attention, one thread, in its fastest plain form (preallocated buffers, in-place
softmax): median milliseconds per call, one JSON object per line on stdout, in the shape of
attn_bench's lines. Run by tests/bench/run.sh with Debian's /usr/bin/python3 and OPENBLAS_NUM_THREADS=1.
Not a test.
usage: numpy_bench.py [--T 64,256] [--d 64,512] [--causal 0,1] [--min-ms 300]
       numpy_bench.py --matmul [--T 16,64,256] [--min-ms 300]   (GPT-2 small's matrix products,
       in the shape of attn_bench --matmul's lines: np.matmul into a preallocated c, + bias in place)
"""
import argparse
import json
import os
import sys
import time

import numpy as np


def attention_fn(T, d, causal):
    """Returns a function computing softmax(Q Kᵀ/√d [+ mask]) V into preallocated buffers."""
    scores = np.empty((T, T), np.float32)
    row = np.empty((T, 1), np.float32)
    out = np.empty((T, d), np.float32)
    scale = np.float32(1.0 / np.sqrt(d))
    mask = np.triu(np.full((T, T), -np.inf, np.float32), k=1) if causal else None

    def run(q, k, v):
        np.matmul(q, k.T, out=scores)
        np.multiply(scores, scale, out=scores)
        if mask is not None:
            np.add(scores, mask, out=scores)
        np.max(scores, axis=1, keepdims=True, out=row)
        np.subtract(scores, row, out=scores)
        np.exp(scores, out=scores)
        np.sum(scores, axis=1, keepdims=True, out=row)
        np.matmul(scores, v, out=out)
        np.divide(out, row, out=out)
        return out

    return run


def reference(q, k, v, causal):
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(q.shape[1])
    if causal:
        s[np.triu_indices(s.shape[0], 1)] = -np.inf
    s = np.exp(s - s.max(axis=1, keepdims=True))
    return (s / s.sum(axis=1, keepdims=True)) @ v


def time_calls(call, min_ms):
    call()
    t0 = time.perf_counter()
    call()
    one = max(1e-6, time.perf_counter() - t0) * 1e3
    reps = max(5, min(400, int(min_ms / one)))
    wall, cpu = [], []
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.thread_time()
        call()
        cpu.append((time.thread_time() - c0) * 1e3)
        wall.append((time.perf_counter() - w0) * 1e3)
    return float(np.median(wall)), float(np.median(cpu)), float(min(cpu)), reps


# GPT-2 small's matrix products (as attn_bench --matmul): name, K, N, layout, bias
MATMUL_SHAPES = [("c_attn", 768, 2304, "NN", True), ("attn.c_proj", 768, 768, "NN", True),
                 ("mlp.c_fc", 768, 3072, "NN", True), ("mlp.c_proj", 3072, 768, "NN", True),
                 ("lm_head", 768, 50257, "NT", False)]


def matmul_bench(Ts, min_ms, flavour, rng):
    for name, K, N, layout, with_bias in MATMUL_SHAPES:
        b = rng.uniform(-1, 1, (N, K) if layout == "NT" else (K, N)).astype(np.float32)
        b_op = b.T if layout == "NT" else b
        bias = rng.uniform(-1, 1, N).astype(np.float32)
        for T in Ts:
            a = rng.uniform(-1, 1, (T, K)).astype(np.float32)
            c = np.empty((T, N), np.float32)

            def run():
                np.matmul(a, b_op, out=c)
                if with_bias:
                    np.add(c, bias, out=c)

            ms, cpu_ms, min_cpu_ms, reps = time_calls(run, min_ms)
            print(json.dumps({"op": "matmul", "name": name, "M": T, "K": K, "N": N, "layout": layout, "bias": with_bias,
                              "backend": "numpy", "flavour": flavour, "ms": round(ms, 5), "cpu_ms": round(cpu_ms, 5),
                              "min_cpu_ms": round(min_cpu_ms, 5), "reps": reps}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ints = lambda s: [int(x) for x in s.split(",")]
    ap.add_argument("--T", type=ints, default=[64, 256, 1024, 2048])
    ap.add_argument("--d", type=ints, default=[64, 512])
    ap.add_argument("--causal", type=ints, default=[0, 1])
    ap.add_argument("--min-ms", type=float, default=300)
    ap.add_argument("--matmul", action="store_true")
    a = ap.parse_args()
    np.ones((4, 4), np.float32) @ np.ones((4, 4), np.float32)  # loads the BLAS
    with open("/proc/self/maps") as maps:  # which BLAS the loader picked (LD_LIBRARY_PATH decides)
        blas = sorted({line.split()[-1] for line in maps if "blas" in line and "/" in line})
    print(f"numpy_bench: numpy {np.__version__}, BLAS {', '.join(blas) or '?'}", file=sys.stderr)
    openblas = any("openblas" in path for path in blas)
    core = os.environ.get("OPENBLAS_CORETYPE", "auto")
    flavour = f"numpy {np.__version__} + " + (f"OpenBLAS ({core})" if openblas else "reference BLAS")
    rng = np.random.default_rng(42)
    if a.matmul:
        Ts = a.T if "--T" in sys.argv else [16, 64, 256]
        return matmul_bench(Ts, a.min_ms, flavour, rng)
    for T in a.T:
        for d in a.d:
            q, k, v = (rng.uniform(-1, 1, (T, d)).astype(np.float32) for _ in range(3))
            for causal in a.causal:
                run = attention_fn(T, d, bool(causal))
                if T <= 256:  # the fast form computes the same thing
                    err = np.abs(run(q, k, v) - reference(q, k, v, bool(causal))).max()
                    assert err < 1e-4, f"numpy attention is wrong: {err}"
                ms, cpu_ms, min_cpu_ms, reps = time_calls(lambda: run(q, k, v), a.min_ms)
                print(json.dumps({"T": T, "d": d, "causal": bool(causal), "backend": "numpy", "flavour": flavour,
                                  "ms": round(ms, 5), "cpu_ms": round(cpu_ms, 5), "min_cpu_ms": round(min_cpu_ms, 5),
                                  "reps": reps}), flush=True)


if __name__ == "__main__":
    main()
