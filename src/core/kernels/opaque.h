// A function pointer the optimisers cannot see through, so the micro-kernels stay separate functions in
// WebAssembly: V8 allocates registers per function, and inside one big function it spills the tiles'
// accumulators. Binaryen (emcc's wasm-opt) inlines every function that has a single call site, whatever
// LLVM's noinline says; a call through a pointer read back from memory is one it cannot resolve, so it stays
// a call. Natively the pointer is returned as it is.
#pragma once

namespace attn {

template <class F>
F opaque(F f) {
#if defined(__wasm__)
  static F volatile slot;
  slot = f;
  return slot;
#else
  return f;
#endif
}

}  // namespace attn
