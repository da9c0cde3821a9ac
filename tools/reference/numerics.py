"""Number formats: f16/bf16 rounding and ggml's Q8_0 / Q4_0 block quantization
(the other block types are in reference/quants.py; round_trip covers all).

All functions work on the LAST axis (a linear weight's in-dim), so a {out, in}
matrix or an {experts, out, in} stack quantizes row by row, as GGUF stores it.
"""
import numpy as np

from . import quants

QK = 32  # values per Q8_0 / Q4_0 block
Q8_0_BLOCK_BYTES = 2 + QK        # f16 scale + 32 int8
Q4_0_BLOCK_BYTES = 2 + QK // 2   # f16 scale + 32 nibbles


def bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round-to-nearest-even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def round_bf16(x):
    return bf16_bits_to_f32(bf16_bits(x))


def round_f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def _round_half_away(v):
    # C roundf(): halves go away from zero (np.round would go to even).
    return np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))


def _blocks(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.shape[-1] % QK:
        raise ValueError(f"quantized dim {x.shape[-1]} is not a multiple of {QK}")
    return x.reshape(-1, QK)  # [num_blocks, 32]


def quantize_q8_0(x):
    """-> (scales f16 [num_blocks], quants int8 [num_blocks, 32])."""
    blocks = _blocks(x)
    amax = np.max(np.abs(blocks), axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    inv_d = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    q = _round_half_away(blocks * inv_d[:, None]).astype(np.int8)
    return d.astype(np.float16), q


def dequantize_q8_0(scales, quants, shape):
    x = scales.astype(np.float32)[:, None] * quants.astype(np.float32)
    return x.reshape(shape)


def q8_0_bytes(scales, quants):
    num_blocks = scales.shape[0]
    out = np.empty((num_blocks, Q8_0_BLOCK_BYTES), dtype=np.uint8)
    out[:, :2] = scales.astype("<f2").view(np.uint8).reshape(num_blocks, 2)
    out[:, 2:] = quants.view(np.uint8)
    return out.tobytes()


def quantize_q4_0(x):
    """-> (scales f16 [num_blocks], nibbles uint8 [num_blocks, 32] in 0..15)."""
    blocks = _blocks(x)
    index_of_max = np.argmax(np.abs(blocks), axis=1)
    signed_max = blocks[np.arange(blocks.shape[0]), index_of_max]  # keeps its sign
    d = (signed_max / np.float32(-8)).astype(np.float32)
    inv_d = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    shifted = blocks * inv_d[:, None] + np.float32(8.5)
    q = np.minimum(15, np.trunc(shifted)).astype(np.uint8)  # shifted >= 0.5, trunc == floor
    return d.astype(np.float16), q


def dequantize_q4_0(scales, nibbles, shape):
    x = scales.astype(np.float32)[:, None] * (nibbles.astype(np.float32) - 8)
    return x.reshape(shape)


def q4_0_bytes(scales, nibbles):
    num_blocks = scales.shape[0]
    out = np.empty((num_blocks, Q4_0_BLOCK_BYTES), dtype=np.uint8)
    out[:, :2] = scales.astype("<f2").view(np.uint8).reshape(num_blocks, 2)
    # byte j holds value j in the low nibble and value j+16 in the high nibble
    out[:, 2:] = nibbles[:, :16] | (nibbles[:, 16:] << 4)
    return out.tobytes()


def unpack_q4_0(raw, num_blocks):
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(num_blocks, Q4_0_BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").reshape(num_blocks)
    packed = blocks[:, 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=1)
    return scales, nibbles


def unpack_q8_0(raw, num_blocks):
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(num_blocks, Q8_0_BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").reshape(num_blocks)
    quants = blocks[:, 2:].copy().view(np.int8)
    return scales, quants


def round_trip(x, dtype_name):
    """The values a reader gets back after storing x in dtype_name (f32, f16, bf16, q8_0, q4_0,
    or any type of reference/quants.py)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype_name == "f32":
        return x.copy()
    if dtype_name == "f16":
        return round_f16(x)
    if dtype_name == "bf16":
        return round_bf16(x)
    if dtype_name == "q8_0":
        return dequantize_q8_0(*quantize_q8_0(x), x.shape)
    if dtype_name == "q4_0":
        return dequantize_q4_0(*quantize_q4_0(x), x.shape)
    if dtype_name in quants.FORMATS:
        return quants.round_trip(x, dtype_name)
    raise ValueError(f"unknown dtype {dtype_name!r}")
