// Compiles the functions between LLMESH_AVX2_BEGIN and LLMESH_AVX2_END for
// AVX2 + FMA + F16C, whatever the file's flags: the same per-function scheme as
// avx512_target.h, so the library still runs, on the reference path, on CPUs
// without AVX2. Include after all other headers.
#pragma once

#if defined(__clang__)
#define LLMESH_AVX2_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c\"))), apply_to = function)")
#define LLMESH_AVX2_END _Pragma("clang attribute pop")
#else
#define LLMESH_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c\")")
#define LLMESH_AVX2_END _Pragma("GCC pop_options")
#endif
