// Which fast kernel families this CPU can run, asked once at startup.
#pragma once

namespace llmesh::kernels::cpu {

// AVX-512 F/BW/VL/DQ with BF16 and VNNI (+ FMA, F16C), with OS support for the register state:
// what kernels/cpu/*_avx512.cpp are compiled for.
bool has_avx512_kernels();

// AVX2 + FMA + F16C, with OS support for the YMM state: what kernels/cpu/*_avx2.cpp are compiled for
// (Haswell and later, Zen 1 and later).
bool has_avx2_kernels();

}  // namespace llmesh::kernels::cpu
