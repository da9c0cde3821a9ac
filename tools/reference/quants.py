"""ggml's block-quantized types beyond Q8_0 / Q4_0, in numpy: Q4_1, Q5_0, Q5_1, the
K-quants Q2_K..Q6_K and Q8_K, IQ4_NL, IQ4_XS and MXFP4.

Written from the format definitions (the GGUF spec's type table and ggml's public
block structs, summarized per type below), independently of llmesh's C++.
Every function works on whole blocks of the LAST axis (row by row, as GGUF stores
weights).

dequantize(raw, name, shape) -> float32, computed in float32 in the order ggml's
reference dequantizers use (scale * sub-scale first, then * q, then - min), so an
implementation that follows the format gives the same floats bit for bit.

quantize(x, name) -> bytes: simple one-pass encoders (per-block min/max or signed
absmax, then the sub-block scales quantized against the block's largest one). They
are valid and reasonably accurate, but NOT llama.cpp's iterative scale search, so
their output differs from llama-quantize's and their error is somewhat larger;
they exist so the test models can be written in every type.
"""
import numpy as np

QK = 32     # values per block of the 32-value types
QKK = 256   # values per K-quant / IQ4_XS super-block

# values per block, bytes per block
FORMATS = {
    "q4_1": (QK, 20), "q5_0": (QK, 22), "q5_1": (QK, 24),
    "q2_k": (QKK, 84), "q3_k": (QKK, 110), "q4_k": (QKK, 144), "q5_k": (QKK, 176),
    "q6_k": (QKK, 210), "q8_k": (QKK, 292),
    "iq4_nl": (QK, 18), "iq4_xs": (QKK, 136), "mxfp4": (QK, 17),
}

IQ4NL_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                        dtype=np.float32)
# OCP MX E2M1 (1 sign, 2 exponent, 1 mantissa bit) code points: 0, 0.5, 1, 1.5, 2, 3, 4, 6
# and their negatives. ggml tables them doubled (integers) and halves the e8m0 scale.
MXFP4_VALUES_X2 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.float32)

F32 = np.float32


def block_size(name):
    return FORMATS[name][0]


def block_bytes(name):
    return FORMATS[name][1]


def nbytes(num_values, name):
    size, nbytes_ = FORMATS[name]
    if num_values % size:
        raise ValueError(f"{num_values} values is not a multiple of the {name} block size {size}")
    return num_values // size * nbytes_


# ---------------------------------------------------------------- byte helpers

def _blocks_of(raw, name):
    size = block_bytes(name)
    data = np.frombuffer(bytes(raw), dtype=np.uint8)
    if data.size % size:
        raise ValueError(f"{data.size} bytes is not a whole number of {name} blocks")
    return data.reshape(-1, size)


def _f16(block_bytes_, offset):
    return block_bytes_[:, offset:offset + 2].copy().view("<f2").reshape(-1).astype(F32)


def _f16_bytes(values):
    return np.asarray(values, dtype=np.float32).astype("<f2").view(np.uint8).reshape(-1, 2)


def _nibbles(packed):
    """[nb, 16] bytes -> [nb, 32]: value j in the low nibble of byte j, value j+16 in the high."""
    return np.concatenate([packed & 0x0F, packed >> 4], axis=1)


def _pack_nibbles(q):
    q = q.astype(np.uint8)
    return q[:, :16] | (q[:, 16:] << 4)


def _signed_extreme(x, axis=-1):
    """The element of largest magnitude along axis, with its sign."""
    index = np.argmax(np.abs(x), axis=axis)
    return np.take_along_axis(x, np.expand_dims(index, axis), axis).squeeze(axis)


def _safe_inverse(d):
    d = np.asarray(d, dtype=np.float32)
    return np.divide(F32(1), d, out=np.zeros_like(d), where=d != 0)


def _round(v):
    return np.floor(v + F32(0.5))


def _as_blocks(x, size):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.shape[-1] % size:
        raise ValueError(f"quantized dim {x.shape[-1]} is not a multiple of {size}")
    return x.reshape(-1, size)


def _round_f16(v):
    return np.asarray(v, dtype=np.float32).astype(np.float16).astype(np.float32)


# ---------------------------------------------------------------- K-quant scale packing

def _unpack_scale_min_k4(s):
    """Q4_K / Q5_K: 12 bytes -> 8 6-bit scales and 8 6-bit mins.
    Pairs 0-3: low 6 bits of bytes 0-3 (scale) and 4-7 (min). Pairs 4-7: low 4 bits from
    bytes 8-11 (scale low nibble, min high nibble), high 2 bits from the top 2 bits of
    bytes 0-3 (scale) and 4-7 (min)."""
    s = s.astype(np.int32)
    scale = np.empty((s.shape[0], 8), np.int32)
    mins = np.empty((s.shape[0], 8), np.int32)
    scale[:, :4] = s[:, 0:4] & 63
    mins[:, :4] = s[:, 4:8] & 63
    scale[:, 4:] = (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)
    mins[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return scale, mins


def _pack_scale_min_k4(scale, mins):
    scale, mins = scale.astype(np.uint8), mins.astype(np.uint8)
    out = np.empty((scale.shape[0], 12), np.uint8)
    out[:, 0:4] = (scale[:, :4] & 63) | ((scale[:, 4:] >> 4) << 6)
    out[:, 4:8] = (mins[:, :4] & 63) | ((mins[:, 4:] >> 4) << 6)
    out[:, 8:12] = (scale[:, 4:] & 0x0F) | ((mins[:, 4:] & 0x0F) << 4)
    return out


def _unpack_scales_q3_k(s):
    """Q3_K: 12 bytes -> 16 signed scales (6-bit, minus 32). Scale i: low 4 bits from byte i
    (i < 8, low nibble) or byte i-8 (high nibble); high 2 bits are bit pair i // 4 of byte 8 + i % 4."""
    s = s.astype(np.int32)
    i = np.arange(16)
    low = np.where(i < 8, s[:, i % 8] & 0x0F, s[:, i % 8] >> 4)
    high = (s[:, 8 + i % 4] >> (2 * (i // 4))) & 3
    return (low | (high << 4)) - 32


def _pack_scales_q3_k(signed):
    u = (signed + 32).astype(np.uint8)
    out = np.zeros((u.shape[0], 12), np.uint8)
    out[:, 0:8] = (u[:, 0:8] & 0x0F) | ((u[:, 8:16] & 0x0F) << 4)
    for i in range(16):
        out[:, 8 + i % 4] |= ((u[:, i] >> 4) & 3) << (2 * (i // 4))
    return out


# Where value i of a 256-value super-block sits in the 2-bit planes of Q2_K / Q3_K and Q6_K:
# i = 128 h + 32 k + l (half h, plane k, l < 32): byte 32 h + l, bits 2k.
_I = np.arange(QKK)
_HALF, _PLANE, _LANE = _I // 128, (_I % 128) // 32, _I % 32
# Q4_K / Q5_K: i = 64 c + 32 u + l: byte 32 c + l, nibble u (qh bit 2c + u).
_CHUNK, _UPPER = _I // 64, (_I % 64) // 32


def _two_bit_planes(qs):
    """Q2_K / Q3_K qs [nb, 64] -> [nb, 256] values in 0..3."""
    return (qs[:, 32 * _HALF + _LANE] >> (2 * _PLANE)) & 3


def _pack_two_bit_planes(q):
    planes = (q.astype(np.uint8) & 3).reshape(-1, 2, 4, 32) << (2 * np.arange(4, dtype=np.uint8))[:, None]
    return np.bitwise_or.reduce(planes, axis=2).reshape(-1, 64)


def _nibble_chunks(qs):
    """Q4_K / Q5_K qs [nb, 128] -> [nb, 256] values in 0..15."""
    byte = qs[:, 32 * _CHUNK + _LANE]
    return np.where(_UPPER == 1, byte >> 4, byte & 0x0F)


def _pack_nibble_chunks(q):
    q = (q.astype(np.uint8) & 0x0F).reshape(-1, 4, 2, 32)
    return (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(-1, 128)


def _bit_planes(bits, num_planes):
    """bits [nb, 256] in 0..1, value i = 32 p + l -> bit p of byte l of [nb, 32]."""
    shifted = bits.astype(np.uint8).reshape(-1, num_planes, 32) << np.arange(num_planes, dtype=np.uint8)[:, None]
    return np.bitwise_or.reduce(shifted, axis=1)


# ---------------------------------------------------------------- dequantize

def dequantize(raw, name, shape):
    b = _blocks_of(raw, name)
    if name in ("q4_1", "q5_1"):
        d, m = _f16(b, 0), _f16(b, 2)
    if name == "q4_1":                      # f16 d, f16 m, 16 B nibbles; x = d q + m
        q = _nibbles(b[:, 4:20]).astype(F32)
        x = d[:, None] * q + m[:, None]
    elif name in ("q5_0", "q5_1"):          # [f16 d, (f16 m)], u32 qh, 16 B nibbles; bit j of qh = bit 4 of value j
        off = 2 if name == "q5_0" else 4
        qh = b[:, off:off + 4].copy().view("<u4").reshape(-1, 1)
        high = ((qh >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32)
        q = _nibbles(b[:, off + 4:off + 20]).astype(np.int32) | (high << 4)
        if name == "q5_0":                  # x = d (q - 16)
            x = _f16(b, 0)[:, None] * (q - 16).astype(F32)
        else:                               # x = d q + m
            x = d[:, None] * q.astype(F32) + m[:, None]
    elif name == "q2_k":                    # scales[16] (scale | min << 4), qs[64], f16 d, f16 dmin
        sc = b[:, 0:16]
        d, dmin = _f16(b, 80), _f16(b, 82)
        q = _two_bit_planes(b[:, 16:80]).astype(F32)
        sub = _I // 16
        dl = d[:, None] * (sc[:, sub] & 0x0F).astype(F32)
        ml = dmin[:, None] * (sc[:, sub] >> 4).astype(F32)
        x = dl * q - ml
    elif name == "q3_k":                    # hmask[32], qs[64], scales[12], f16 d; q = low2 - (hmask bit ? 0 : 4)
        hmask, qs, d = b[:, 0:32], b[:, 32:96], _f16(b, 108)
        low = _two_bit_planes(qs).astype(np.int32)
        high = (hmask[:, _LANE] >> (4 * _HALF + _PLANE)) & 1
        q = low - np.where(high == 1, 0, 4)
        scales = _unpack_scales_q3_k(b[:, 96:108])
        x = (d[:, None] * scales[:, _I // 16].astype(F32)) * q.astype(F32)
    elif name in ("q4_k", "q5_k"):          # f16 d, f16 dmin, scales[12], [qh[32]], qs[128]
        d, dmin = _f16(b, 0), _f16(b, 2)
        scale, mins = _unpack_scale_min_k4(b[:, 4:16])
        if name == "q4_k":
            q = _nibble_chunks(b[:, 16:144]).astype(np.int32)
        else:
            qh = b[:, 16:48]
            high = (qh[:, _LANE] >> (2 * _CHUNK + _UPPER)) & 1
            q = _nibble_chunks(b[:, 48:176]).astype(np.int32) | (high.astype(np.int32) << 4)
        sub = _I // 32
        x = (d[:, None] * scale[:, sub].astype(F32)) * q.astype(F32) - dmin[:, None] * mins[:, sub].astype(F32)
    elif name == "q6_k":                    # ql[128], qh[64], int8 scales[16], f16 d; q = 6 bits - 32
        ql, qh, d = b[:, 0:128], b[:, 128:192], _f16(b, 208)
        scales = b[:, 192:208].view(np.int8).astype(F32)
        low_byte = ql[:, 64 * _HALF + _LANE + 32 * (_PLANE % 2)]
        low = np.where(_PLANE < 2, low_byte & 0x0F, low_byte >> 4).astype(np.int32)
        high = ((qh[:, 32 * _HALF + _LANE] >> (2 * _PLANE)) & 3).astype(np.int32)
        q = (low | (high << 4)) - 32
        x = (d[:, None] * scales[:, _I // 16]) * q.astype(F32)
    elif name == "q8_k":                    # f32 d, int8 qs[256], int16 bsums[16]
        d = b[:, 0:4].copy().view("<f4").reshape(-1)
        x = d[:, None] * b[:, 4:260].view(np.int8).astype(F32)
    elif name == "iq4_nl":                  # f16 d, 16 B nibbles indexing IQ4NL_VALUES
        x = _f16(b, 0)[:, None] * IQ4NL_VALUES[_nibbles(b[:, 2:18])]
    elif name == "iq4_xs":                  # f16 d, u16 scales_h, scales_l[4], qs[128]; 8 sub-blocks of 32
        d = _f16(b, 0)
        scales_h = b[:, 2:4].copy().view("<u2").reshape(-1, 1).astype(np.int32)
        s = np.arange(8)
        low = (b[:, 4 + s // 2].astype(np.int32) >> (4 * (s % 2))) & 0x0F
        ls = (low | (((scales_h >> (2 * s)) & 3) << 4)) - 32            # [nb, 8]
        dl = d[:, None] * ls.astype(F32)
        codes = _nibbles(b[:, 8:136].reshape(-1, 16)).reshape(-1, 8, 32)
        x = (dl[:, :, None] * IQ4NL_VALUES[codes]).reshape(-1, QKK)
    elif name == "mxfp4":                   # u8 e8m0 exponent e, 16 B nibbles of E2M1 codes; x = 2^(e-127) fp4
        e = b[:, 0].astype(np.int32)
        d = np.where(e == 0xFF, F32(np.nan), np.ldexp(F32(1), e - 128).astype(F32)).astype(F32)
        x = d[:, None] * MXFP4_VALUES_X2[_nibbles(b[:, 1:17])]
    else:
        raise ValueError(f"unknown quantized type {name!r}")
    return np.asarray(x, dtype=np.float32).reshape(shape)


# ---------------------------------------------------------------- quantize (simple, one pass)

def _min_max_blocks(x, levels):
    """Asymmetric: x = d q + m with q in [0, levels]; d, m rounded to f16 first."""
    lo, hi = x.min(axis=1), x.max(axis=1)
    d = _round_f16((hi - lo) / F32(levels))
    m = _round_f16(lo)
    q = np.clip(_round((x - m[:, None]) * _safe_inverse(d)[:, None]), 0, levels)
    return d, m, q.astype(np.int32)


def _nearest(values, table):
    """Index of the nearest table entry for each value (via the midpoints of the sorted
    table, so memory stays linear in the number of values)."""
    order = np.argsort(table, kind="stable")
    ordered = table[order]
    midpoints = (ordered[1:] + ordered[:-1]) / 2
    return order[np.searchsorted(midpoints, values)].astype(np.uint8)


def _k_sub_scales(x, levels, sub, scale_levels):
    """Q2_K / Q4_K / Q5_K: per sub-block x ~ sc d q - mn dmin, q in [0, levels], sc and mn in
    [0, scale_levels]; the (non-positive) sub-block minimum is the offset."""
    nb = x.shape[0]
    xs = x.reshape(nb, -1, sub)
    lo = np.minimum(xs.min(axis=2), 0)
    hi = xs.max(axis=2)
    step = (hi - lo) / F32(levels)
    d = _round_f16(step.max(axis=1) / F32(scale_levels))
    dmin = _round_f16((-lo).max(axis=1) / F32(scale_levels))
    sc = np.clip(_round(step * _safe_inverse(d)[:, None]), 0, scale_levels).astype(np.int32)
    mn = np.clip(_round(-lo * _safe_inverse(dmin)[:, None]), 0, scale_levels).astype(np.int32)
    dl = d[:, None] * sc.astype(F32)
    ml = dmin[:, None] * mn.astype(F32)
    q = np.clip(_round((xs + ml[:, :, None]) * _safe_inverse(dl)[:, :, None]), 0, levels)
    return d, dmin, sc, mn, q.reshape(nb, -1).astype(np.int32)


def _signed_sub_scales(x, sub, q_extreme, scale_max):
    """Q3_K / Q6_K / IQ4_XS: per sub-block a signed scale s putting the extreme value at
    q_extreme, stored as round(s / d) in [-scale_max - 1, scale_max] with d = max |s| / scale_max."""
    nb = x.shape[0]
    xs = x.reshape(nb, -1, sub)
    s = _signed_extreme(xs, axis=2) / F32(q_extreme)
    d = _round_f16(np.abs(s).max(axis=1) / F32(scale_max))
    sc = np.clip(_round(s * _safe_inverse(d)[:, None]), -scale_max - 1, scale_max).astype(np.int32)
    dl = d[:, None] * sc.astype(F32)
    return d, sc, xs * _safe_inverse(dl)[:, :, None]   # the last: x in units of each sub-block's step


def quantize(x, name):
    size = block_size(name)
    x = _as_blocks(x, size)
    nb = x.shape[0]
    out = np.zeros((nb, block_bytes(name)), np.uint8)
    if name in ("q4_1", "q5_1"):
        d, m, q = _min_max_blocks(x, 15 if name == "q4_1" else 31)
        out[:, 0:2], out[:, 2:4] = _f16_bytes(d), _f16_bytes(m)
        if name == "q4_1":
            out[:, 4:20] = _pack_nibbles(q)
        else:
            out[:, 4:8] = _pack_qh(q)
            out[:, 8:24] = _pack_nibbles(q & 0x0F)
    elif name == "q5_0":                    # like Q4_0: the signed extreme maps to q = 0 (value -16 d)
        d = _round_f16(_signed_extreme(x) / F32(-16))
        q = np.clip(np.floor(x * _safe_inverse(d)[:, None] + F32(16.5)), 0, 31).astype(np.int32)
        out[:, 0:2], out[:, 2:6], out[:, 6:22] = _f16_bytes(d), _pack_qh(q), _pack_nibbles(q & 0x0F)
    elif name == "q2_k":
        d, dmin, sc, mn, q = _k_sub_scales(x, 3, 16, 15)
        out[:, 0:16] = (sc | (mn << 4)).astype(np.uint8)
        out[:, 16:80] = _pack_two_bit_planes(q)
        out[:, 80:82], out[:, 82:84] = _f16_bytes(d), _f16_bytes(dmin)
    elif name == "q3_k":
        d, sc, scaled = _signed_sub_scales(x, 16, -4, 31)
        q = np.clip(_round(scaled), -4, 3).reshape(nb, -1).astype(np.int32) + 4   # 0..7
        hmask = _bit_planes((q >> 2) & 1, 8)       # value 32 p + l (p = 4 h + k): bit p of hmask[l]
        out[:, 0:32], out[:, 32:96] = hmask, _pack_two_bit_planes(q & 3)
        out[:, 96:108], out[:, 108:110] = _pack_scales_q3_k(sc), _f16_bytes(d)
    elif name in ("q4_k", "q5_k"):
        levels = 15 if name == "q4_k" else 31
        d, dmin, sc, mn, q = _k_sub_scales(x, levels, 32, 63)
        out[:, 0:2], out[:, 2:4], out[:, 4:16] = _f16_bytes(d), _f16_bytes(dmin), _pack_scale_min_k4(sc, mn)
        if name == "q4_k":
            out[:, 16:144] = _pack_nibble_chunks(q)
        else:
            qh = _bit_planes((q >> 4) & 1, 8)      # value 32 p + l (p = 2 c + u): bit p of qh[l]
            out[:, 16:48], out[:, 48:176] = qh, _pack_nibble_chunks(q & 0x0F)
    elif name == "q6_k":
        d, sc, scaled = _signed_sub_scales(x, 16, -32, 127)
        q = (np.clip(_round(scaled), -32, 31).reshape(nb, -1) + 32).astype(np.uint8)   # 0..63
        q = q.reshape(nb, 2, 4, 32)                 # [half, plane k, lane l]
        # ql[64 h + 32 (k % 2) + l]: nibble k // 2; qh[32 h + l]: bits 2k
        ql = (q[:, :, 0:2] & 0x0F) | ((q[:, :, 2:4] & 0x0F) << 4)
        qh = np.bitwise_or.reduce((q >> 4) << (2 * np.arange(4, dtype=np.uint8))[:, None], axis=2)
        out[:, 0:128], out[:, 128:192] = ql.reshape(nb, 128), qh.reshape(nb, 64)
        out[:, 192:208] = sc.astype(np.int8).view(np.uint8)
        out[:, 208:210] = _f16_bytes(d)
    elif name == "q8_k":                    # the signed extreme maps to -128
        d = (_signed_extreme(x) / F32(-128)).astype(np.float32)
        q = np.clip(_round(x * _safe_inverse(d)[:, None]), -128, 127).astype(np.int8)
        out[:, 0:4] = d.astype("<f4").view(np.uint8).reshape(nb, 4)
        out[:, 4:260] = q.view(np.uint8)
        out[:, 260:292] = q.reshape(nb, 16, 16).astype(np.int32).sum(axis=2).astype("<i2").view(np.uint8)
    elif name == "iq4_nl":                  # the signed extreme maps to the table's -127
        d = _round_f16(_signed_extreme(x) / F32(-127))
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:18] = _pack_nibbles(_nearest(x * _safe_inverse(d)[:, None], IQ4NL_VALUES))
    elif name == "iq4_xs":
        d, sc, scaled = _signed_sub_scales(x, 32, -127, 31)
        codes = _nearest(scaled, IQ4NL_VALUES).reshape(nb * 8, 32)
        u = (sc + 32).astype(np.int32)                                        # [nb, 8] in 0..63
        scales_h = np.zeros(nb, np.int32)
        for s in range(8):
            scales_h |= ((u[:, s] >> 4) & 3) << (2 * s)
        out[:, 0:2], out[:, 2:4] = _f16_bytes(d), scales_h.astype("<u2").view(np.uint8).reshape(nb, 2)
        out[:, 4:8] = ((u[:, 0::2] & 0x0F) | ((u[:, 1::2] & 0x0F) << 4)).astype(np.uint8)
        out[:, 8:136] = _pack_nibbles(codes).reshape(nb, 128)
    elif name == "mxfp4":                   # the smallest power-of-two scale that keeps |x| <= 6 * 2^(e-127)
        amax = np.abs(x).max(axis=1)
        with np.errstate(divide="ignore"):
            e = np.where(amax > 0, np.ceil(np.log2(amax / F32(6))) + 127, 0)
        e = np.clip(e, 0, 254).astype(np.int32)
        scale = np.ldexp(F32(1), e - 128).astype(F32)
        out[:, 0] = e.astype(np.uint8)
        out[:, 1:17] = _pack_nibbles(_nearest(x / scale[:, None], MXFP4_VALUES_X2))
    else:
        raise ValueError(f"unknown quantized type {name!r}")
    return out.tobytes()


def _pack_qh(q):
    """Q5_0 / Q5_1: bit 4 of value j -> bit j of a little-endian u32."""
    bits = ((q >> 4) & 1).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    return bits.sum(axis=1).astype("<u4").view(np.uint8).reshape(-1, 4)


def round_trip(x, name):
    x = np.asarray(x, dtype=np.float32)
    return dequantize(quantize(x, name), name, x.shape)
