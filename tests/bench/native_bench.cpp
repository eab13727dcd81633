// Native kernel benchmark: median milliseconds of one attention_forward call (output only, no
// weights) for each backend and shape, as one JSON object per line on stdout. Not a test.
// usage: attn_bench [--T 64,256] [--d 64] [--causal 0,1] [--backend simd,eigen] [--min-ms 300]
//                   [--scalar-max-T 1024]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/core/kernels/kernels.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#else
#include <time.h>
#endif

namespace {

std::vector<int> parse_ints(const char* text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

std::vector<std::string> parse_words(const char* text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// CPU time of this thread (under node: of the process), in ms: less sensitive than the wall
// clock to other processes on a loaded machine.
double cpu_ms() {
#if defined(__EMSCRIPTEN__)
  return EM_ASM_DOUBLE({
    if (typeof process !== "undefined" && process.cpuUsage) { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
    return performance.now();
  });
#else
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
#endif
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Timing {
  double wall_ms, cpu_ms, min_cpu_ms;
  int reps;
};

// Medians (wall and CPU) of calls after a warm-up; as many calls as fit in min_ms (5 to 400).
template <class F>
Timing time_calls(F&& call, double min_ms) {
  call();
  const double t0 = now_ms();
  call();
  const double one = std::max(1e-3, now_ms() - t0);
  const int reps = std::max(5, std::min(400, static_cast<int>(min_ms / one)));
  std::vector<double> wall(reps), cpu(reps);
  for (int r = 0; r < reps; ++r) {
    const double start = now_ms(), start_cpu = cpu_ms();
    call();
    cpu[r] = cpu_ms() - start_cpu;
    wall[r] = now_ms() - start;
  }
  return {median(wall), median(cpu), *std::min_element(cpu.begin(), cpu.end()), reps};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> Ts{64, 256, 1024, 2048}, ds{64, 512}, causals{0, 1};
  std::vector<std::string> backends{"simd", "eigen", "scalar"};
  double min_ms = 300;
  int scalar_max_T = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--d") ds = parse_ints(argv[i + 1]);
    else if (flag == "--causal") causals = parse_ints(argv[i + 1]);
    else if (flag == "--backend") backends = parse_words(argv[i + 1]);
    else if (flag == "--min-ms") min_ms = std::atof(argv[i + 1]);
    else if (flag == "--scalar-max-T") scalar_max_T = std::atoi(argv[i + 1]);
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  std::fprintf(stderr, "attn_bench: SIMD flavour %s\n", attn::simd_flavour());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int T : Ts)
    for (int d : ds) {
      std::vector<float> q(static_cast<std::size_t>(T) * d), k(q.size()), v(q.size()), out(q.size());
      for (auto* m : {&q, &k, &v})
        for (float& x : *m) x = uniform(rng);
      for (int causal : causals)
        for (const std::string& name : backends) {
          attn::Backend backend;
          if (!attn::parse_backend(name, &backend)) { std::fprintf(stderr, "unknown backend %s\n", name.c_str()); return 2; }
          if (backend == attn::Backend::Scalar && T > scalar_max_T) continue;
          attn::AttentionProblem p;
          p.query = q.data(); p.key = k.data(); p.value = v.data();
          p.Tq = p.Tk = T; p.d = p.dv = d;
          p.scale = 1.0f / std::sqrt(static_cast<float>(d));
          p.causal = causal != 0;
          const Timing t = time_calls([&] { attn::attention_forward(backend, p, out.data(), nullptr); }, min_ms);
          std::printf("{\"T\":%d,\"d\":%d,\"causal\":%s,\"backend\":\"%s\",\"flavour\":\"%s\",\"ms\":%.5f,"
                      "\"cpu_ms\":%.5f,\"min_cpu_ms\":%.5f,\"reps\":%d}\n", T, d, causal ? "true" : "false", name.c_str(),
                      name == "simd" ? attn::simd_flavour() : name.c_str(), t.wall_ms, t.cpu_ms, t.min_cpu_ms, t.reps);
          std::fflush(stdout);
        }
    }
  return 0;
}
