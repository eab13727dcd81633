// The CPU attention kernels behind one interface: scalar (the truth), Eigen and 128-bit SIMD.
// Not the lesson's trace (see attention.h): a kernel computes only weights and output, fast.
#pragma once
#include <string>
#include <vector>

namespace attn {

enum class Backend { Scalar, Eigen, Simd };

// Shapes (row-major): query (Tq, d), key (Tk, d), value (Tk, dv); output (Tq, dv); weights (Tq, Tk).
// score_ij = scale * q_i·k_j, where scale folds in 1/√d and 1/temperature.
// causal: key j is hidden from query i when j > i (top-left aligned, as torch's is_causal).
// window > 0: also hidden when i − j ≥ window (a sliding-window layer: query i sees keys
// i − window + 1 … i). softcap > 0: each scaled score s becomes tanh(s / softcap) · softcap before
// the mask (Gemma 2's cap), so no score leaves (−softcap, softcap). cut (Tq, Tk), when given: a
// nonzero entry hides that key from that query too (a link cut to ask the model what it used); the
// caller leaves every query at least one visible key. first_query > 0: the rows are the later
// queries first_query … first_query + Tq − 1 of a longer text (the mask and the window read
// first_query + i for row i): an incremental forward's new rows against every cached key.
struct AttentionProblem {
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  int Tq = 0, Tk = 0, d = 0, dv = 0;
  float scale = 1.0f;
  bool causal = false;
  int window = 0;
  float softcap = 0.0f;
  const unsigned char* cut = nullptr;
  int first_query = 0;
  bool hidden(int i, int j) const {
    const int q = first_query + i;
    return (causal && j > q) || (window > 0 && q - j >= window) || (cut && cut[static_cast<long>(i) * Tk + j]);
  }
};

// Writes output and, when weights != nullptr, the full weight matrix. Masked weights are exactly 0.
// The caller validates shapes (attention.h's validate_problem); kernels trust them.
void attention_forward(Backend backend, const AttentionProblem& problem, float* output, float* weights);

// How many query rows the kernel computes together for `problem`: a row's last bits depend on the
// rows grouped with it, so a caller that computes some rows again (first_query) starts at a multiple
// of this to get the numbers the whole problem gets. 1: every row alone (scalar); 0: every row
// depends on Tq and Tk (the Eigen matrix form, and the SIMD backend where it takes that form).
int attention_row_block(Backend backend, const AttentionProblem& problem);
int attention_simd_row_block(const AttentionProblem& problem);

// One function per backend, so tests and benchmarks can name them.
void attention_scalar(const AttentionProblem& problem, float* output, float* weights);
void attention_eigen(const AttentionProblem& problem, float* output, float* weights);
void attention_simd(const AttentionProblem& problem, float* output, float* weights);

const char* backend_name(Backend backend);
// "scalar" | "eigen" | "simd"; returns false for anything else.
bool parse_backend(const std::string& name, Backend* backend);
// Which instruction set the SIMD backend runs on now: "wasm-simd128", "avx512f", "avx2-fma", "sse2"
// or "scalar" (the portable path). Natively on x86-64 the widest the processor has, unless the
// environment variable ATTN_SIMD_ISA=avx2|sse2 caps it or select_simd_flavour() chose another.
const char* simd_flavour();
// Every flavour this build can run on this processor, widest first (the default is the first one
// ATTN_SIMD_ISA allows).
std::vector<std::string> simd_flavours();
// Makes the SIMD backend run on `name` (one of simd_flavours()) from now on; "" goes back to the
// default. Returns false, changing nothing, for any other name. For tests and benchmarks: it is
// process-wide and not meant to change while another thread computes.
bool select_simd_flavour(const std::string& name);

}  // namespace attn
