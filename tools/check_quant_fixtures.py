#!/usr/bin/env python3
"""Checks that our reading of each GGUF block format is llama.cpp's, on the blocks that
llama-quantize wrote (tests/fixtures/quants/, made by tools/make_quant_fixtures.py):

  (a) tools/reference dequantizes llama.cpp's blocks to within the type's expected error
      of the original f32 values (normalized MSE = mean((x' - x)^2) / mean(x^2), below
      MAX_NMSE); a misread layout (wrong bit order, scale packing or field offset) gives
      an error of order 1 or more;
  (b) the float32 bytes it gets hash to the manifest's FNV-1a value, which the C++ test
      (tests/unit/kernels/quant_fixtures_test.cpp) checks its own dequantization against:
      C++ and numpy agree bit for bit.
It also round-trips the same f32 values through our simple numpy quantizers
(reference/quants.py) and reports their error next to llama.cpp's, bounded by
MAX_NMSE_OURS.

  /usr/bin/python3 tools/check_quant_fixtures.py [--fixtures tests/fixtures/quants]
"""
import argparse
import os
import sys

import numpy as np

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS_DIR)
from make_quant_fixtures import FIXTURE_DIR, fnv1a64  # noqa: E402
from reference import numerics  # noqa: E402

# Per type: ~2-3x the normalized MSE llama-quantize's blocks show on these random
# (Gaussian-like) weights, measured when the fixtures were made (value in the comment).
MAX_NMSE = {
    "q8_0": 1e-4,     # 2.7e-5
    "q6_k": 8e-4,     # 3.2e-4
    "q5_0": 5e-3,     # 1.8e-3
    "q5_1": 4e-3,     # 1.5e-3
    "q5_k": 4e-3,     # 1.3e-3
    "q4_0": 2e-2,     # 7.4e-3
    "q4_1": 1.5e-2,   # 6.0e-3
    "q4_k": 1.5e-2,   # 5.1e-3
    "iq4_nl": 1.5e-2,  # 5.8e-3
    "iq4_xs": 1.5e-2,  # 5.9e-3
    "mxfp4": 3e-2,    # 1.3e-2
    "q3_k": 5e-2,     # 2.3e-2
    "q2_k": 2e-1,     # 8.9e-2
}
# Our one-pass quantizers skip llama.cpp's scale search: allowed up to 3x its bound.
MAX_NMSE_OURS = {name: 3 * bound for name, bound in MAX_NMSE.items()}


def read_manifest(directory):
    entries = []
    with open(os.path.join(directory, "MANIFEST")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, rows, cols, tensor, qtype, digest = line.split()
            entries.append((name, int(rows), int(cols), tensor, qtype, int(digest, 16)))
    return entries


def dequantize(name, raw, shape):
    num_blocks = int(np.prod(shape)) // numerics.QK
    if name == "q8_0":
        return numerics.dequantize_q8_0(*numerics.unpack_q8_0(raw, num_blocks), shape)
    if name == "q4_0":
        return numerics.dequantize_q4_0(*numerics.unpack_q4_0(raw, num_blocks), shape)
    return numerics.quants.dequantize(raw, name, shape)


def nmse(approx, exact):
    exact = exact.astype(np.float64)
    return float(np.mean((approx.astype(np.float64) - exact) ** 2) / np.mean(exact ** 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", default=FIXTURE_DIR)
    args = parser.parse_args()
    failures = 0
    print(f"{'type':7} {'from':10} {'llama.cpp nmse':>14} {'bound':>8} {'ours nmse':>10} {'bound':>8}  result")
    for name, rows, cols, tensor, qtype, digest in read_manifest(args.fixtures):
        with open(os.path.join(args.fixtures, f"{name}.blocks"), "rb") as f:
            raw = f.read()
        original = np.fromfile(os.path.join(args.fixtures, f"{name}.f32"), dtype="<f4").reshape(rows, cols)
        ours = dequantize(name, raw, (rows, cols))
        problems = []
        error = nmse(ours, original)
        if not error <= MAX_NMSE[name]:
            problems.append(f"dequantized llama.cpp blocks: nmse {error:.2e} > {MAX_NMSE[name]:.0e}")
        if fnv1a64(np.ascontiguousarray(ours, dtype="<f4").tobytes()) != digest:
            problems.append("dequantized floats do not hash to the manifest's value (what the C++ test expects)")
        own_error = nmse(numerics.round_trip(original, name), original)
        if not own_error <= MAX_NMSE_OURS[name]:
            problems.append(f"our quantizer: nmse {own_error:.2e} > {MAX_NMSE_OURS[name]:.0e}")
        failures += bool(problems)
        print(f"{name:7} {qtype:10} {error:14.2e} {MAX_NMSE[name]:8.1e} {own_error:10.2e} {MAX_NMSE_OURS[name]:8.1e}  "
              + ("FAIL: " + "; ".join(problems) if problems else "ok"))
    print("all fixtures ok" if not failures else f"{failures} fixture(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
