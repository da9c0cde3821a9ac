#!/usr/bin/env python3
"""Regenerates tests/fixtures/quants/: blocks quantized by llama.cpp's llama-quantize, cut
small, with the original f32 values, so tests can check llmesh reads each format exactly
as llama.cpp writes it without needing llama.cpp.

  /usr/bin/python3 tools/make_quant_fixtures.py [--peer /work/shared/peers/llama.cpp] [--work /tmp/qfix]

Steps: write the F32 GGUFs of tiny-qwen3-k (every matmul in-dim a multiple of 256) and
tiny-qwen3moe (MXFP4_MOE only quantizes expert tensors) with tools/gen_models.py's
generator; run `llama-quantize F32.gguf OUT.gguf TYPE` for each llama-quantize type
below; for each ggml type wanted, take the first tensor of that type in that output (file
order) and keep its first rows (VALUES_PER_FIXTURE values): TYPE.blocks (the raw blocks)
and TYPE.f32 (the same values from the F32 file). MANIFEST lists, per fixture: type, rows,
cols, tensor, llama-quantize type, and the FNV-1a 64 hash of the float32 bytes that
tools/reference/quants.py dequantizes the blocks to (the C++ test compares its own
dequantization against that hash: bit for bit). tools/check_quant_fixtures.py checks them.

If llama-quantize fails to start, it is re-run with its lib/ symlinks repaired, then (on
SIGILL: this peer is an AVX-512 build and some CPUs lack it) with a stub CPU backend
library: quantizing needs only ggml-base's quantizers, not the CPU backend, whose init
is what executes AVX-512 instructions.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS_DIR)
import gen_models  # noqa: E402
import gguf_reader  # noqa: E402
import gguf_writer  # noqa: E402
from reference import model_spec, numerics, quants  # noqa: E402

REPO_ROOT = os.path.dirname(TOOLS_DIR)
FIXTURE_DIR = os.path.join(REPO_ROOT, "tests", "fixtures", "quants")
VALUES_PER_FIXTURE = 4096   # 128 blocks of 32 / 16 super-blocks of 256; 16 KiB of f32 each

# ggml type wanted -> (model, llama-quantize type whose output holds it)
WANTED = {
    "q4_0": ("tiny-qwen3-k", "Q4_0"), "q4_1": ("tiny-qwen3-k", "Q4_1"),
    "q5_0": ("tiny-qwen3-k", "Q5_0"), "q5_1": ("tiny-qwen3-k", "Q5_1"),
    "q8_0": ("tiny-qwen3-k", "Q8_0"), "q2_k": ("tiny-qwen3-k", "Q2_K"),
    "q3_k": ("tiny-qwen3-k", "Q3_K_M"), "q4_k": ("tiny-qwen3-k", "Q4_K_M"),
    "q5_k": ("tiny-qwen3-k", "Q5_K_M"), "q6_k": ("tiny-qwen3-k", "Q6_K"),
    "iq4_nl": ("tiny-qwen3-k", "IQ4_NL"), "iq4_xs": ("tiny-qwen3-k", "IQ4_XS"),
    "mxfp4": ("tiny-qwen3moe", "MXFP4_MOE"),
}

STUB_SOURCE = ("#include <stddef.h>\n"
               "void* ggml_backend_cpu_reg(void) { return NULL; }\n"
               "void* ggml_backend_cpu_buffer_type(void) { return NULL; }\n")


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in bytes(data):
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def lib_dir(peer, work, stub):
    """The peer's lib/ with working symlinks (a copy may have turned them into small files
    holding the target's name), and with stub: a stub libggml-cpu (see the module doc)."""
    directory = os.path.join(work, "stub-lib" if stub else "lib")
    if os.path.isdir(directory):
        return directory
    os.makedirs(directory)
    lib = os.path.join(peer, "lib")
    for name in os.listdir(lib):
        path = os.path.join(lib, name)
        if not name.startswith("lib") or (stub and name.startswith("libggml-cpu.so")):
            continue
        if os.path.getsize(path) < 100 and not os.path.islink(path):
            with open(path) as f:
                path = os.path.join(lib, f.read().strip())
        os.symlink(path, os.path.join(directory, name))
    if stub:
        source = os.path.join(work, "ggml_cpu_stub.c")
        with open(source, "w") as f:
            f.write(STUB_SOURCE)
        subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(directory, "libggml-cpu.so.0"), source],
                       check=True)
    return directory


def quantize(peer, work, src, dst, qtype):
    attempts = [None, False, True]   # the peer's wrapper, then repaired symlinks, then the stub CPU backend
    for stub in attempts:
        if stub is None:
            command, env = [os.path.join(peer, "bin", "llama-quantize")], None
        else:
            command = [os.path.join(peer, "lib", "llama-quantize.bin")]
            env = dict(os.environ, LD_LIBRARY_PATH=lib_dir(peer, work, stub))
        command += [src, dst, qtype, "2"]
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode == 0:
            return
    raise RuntimeError(f"llama-quantize {qtype} failed:\n{result.stderr[-3000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", default="/work/shared/peers/llama.cpp")
    parser.add_argument("--work", help="scratch directory (default: a temporary one, removed after)")
    parser.add_argument("--out", default=FIXTURE_DIR)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="quant-fixtures-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    try:
        f32_paths = {}
        for model in sorted({m for m, _ in WANTED.values()}):
            spec = model_spec.GOLDEN_MODELS[model]
            gen_models.generate_preset(work, spec, ["f32"])
            f32_paths[model] = os.path.join(work, f"{model}-f32.gguf")
        manifest = []
        for name, (model, qtype) in WANTED.items():
            out_path = os.path.join(work, f"{model}-{qtype}.gguf")
            if not os.path.exists(out_path):
                quantize(args.peer, work, f32_paths[model], out_path, qtype)
            quantized = gguf_reader.GGUFFile(out_path)
            wanted_type = gguf_writer.GGML_TYPE_BY_NAME[name]
            tensor = next(t for t, (_, ggml_type, _) in quantized.tensor_infos.items() if ggml_type == wanted_type)
            shape = quantized.tensor_infos[tensor][0]
            cols = shape[-1]
            rows = VALUES_PER_FIXTURE // cols
            row_bytes = gguf_writer.tensor_nbytes((cols,), wanted_type)
            blocks = bytes(quantized.raw(tensor)[:rows * row_bytes])
            original = gguf_reader.GGUFFile(f32_paths[model]).tensor(tensor).reshape(-1, cols)[:rows]
            dequantized = (numerics.dequantize_q8_0(*numerics.unpack_q8_0(blocks, rows * cols // 32), (rows, cols))
                           if name == "q8_0" else
                           numerics.dequantize_q4_0(*numerics.unpack_q4_0(blocks, rows * cols // 32), (rows, cols))
                           if name == "q4_0" else quants.dequantize(blocks, name, (rows, cols)))
            with open(os.path.join(args.out, f"{name}.blocks"), "wb") as f:
                f.write(blocks)
            np.ascontiguousarray(original, dtype="<f4").tofile(os.path.join(args.out, f"{name}.f32"))
            digest = fnv1a64(np.ascontiguousarray(dequantized, dtype="<f4").tobytes())
            manifest.append(f"{name} {rows} {cols} {tensor} {qtype} {digest:016x}")
            print(f"{name:7} {tensor:28} {rows} x {cols} from {qtype}", flush=True)
        with open(os.path.join(args.out, "MANIFEST"), "w") as f:
            f.write("# type rows cols tensor llama-quantize-type fnv1a64-of-numpy-dequantized-f32 "
                    "(tools/make_quant_fixtures.py)\n")
            f.write("\n".join(manifest) + "\n")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
