// Compiles the functions between LLMESH_AVX512_BEGIN and LLMESH_AVX512_END for
// AVX-512 (F/BW/VL/DQ + BF16 + VNNI + FMA + F16C), whatever the file's flags.
// Per-function targets (not -mavx512f on the file) keep inline code from
// headers (std::vector, ...) portable, so the library still runs, on the
// reference path, on CPUs without AVX-512. Include after all other headers.
#pragma once

#if defined(__clang__)
#define LLMESH_AVX512_BEGIN                                                                                      \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vnni,fma,f16c\"))), apply_to = function)")
#define LLMESH_AVX512_END _Pragma("clang attribute pop")
#else
#define LLMESH_AVX512_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vnni,fma,f16c\")")
#define LLMESH_AVX512_END _Pragma("GCC pop_options")
#endif
