#include "kernels/cpu/cpu_features.h"

#include <cpuid.h>

#include <cstdint>

namespace llmesh::kernels::cpu {

namespace {

bool bit(uint32_t reg, int index) { return (reg >> index) & 1u; }

// XCR0: which register state the OS saves on a context switch. Only valid when CPUID says OSXSAVE.
uint32_t xcr0() {
  uint32_t low, high;
  __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return low;
}

// SSE, AVX (YMM upper halves), opmask, ZMM upper halves, ZMM16-31.
bool os_saves_avx512_state() { return (xcr0() & 0xe6u) == 0xe6u; }
// SSE and AVX (bits 1, 2).
bool os_saves_avx_state() { return (xcr0() & 0x6u) == 0x6u; }

}  // namespace

bool has_avx512_kernels() {
  // CPUID directly rather than __builtin_cpu_supports: older compilers do not know "avx512bf16".
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = bit(ecx, 12), osxsave = bit(ecx, 27), f16c = bit(ecx, 29);
  if (!fma || !osxsave || !f16c || !os_saves_avx512_state()) return false;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool avx512f = bit(ebx, 16), avx512dq = bit(ebx, 17), avx512bw = bit(ebx, 30), avx512vl = bit(ebx, 31);
  const bool avx512_vnni = bit(ecx, 11);
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  const bool avx512_bf16 = bit(eax, 5);
  return avx512f && avx512dq && avx512bw && avx512vl && avx512_vnni && avx512_bf16;
}

bool has_avx2_kernels() {
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = bit(ecx, 12), osxsave = bit(ecx, 27), avx = bit(ecx, 28), f16c = bit(ecx, 29);
  // xgetbv faults unless OSXSAVE is set, so check it first.
  if (!fma || !osxsave || !avx || !f16c || !os_saves_avx_state()) return false;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  return bit(ebx, 5);  // AVX2
}

}  // namespace llmesh::kernels::cpu
