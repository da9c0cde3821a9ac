"""Rotary position embedding frequencies, from the published definitions.

inv_freq_i = theta^(-2i/d), i = 0 .. d/2-1.
Llama 3 scaling (rope_type "llama3"): with wavelen_i = 2*pi / inv_freq_i,
  low_freq_wavelen  = original_max_position_embeddings / low_freq_factor
  high_freq_wavelen = original_max_position_embeddings / high_freq_factor
  wavelen < high_freq_wavelen  -> inv_freq unchanged
  wavelen > low_freq_wavelen   -> inv_freq / factor
  otherwise smooth = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            inv_freq * ((1 - smooth) / factor + smooth)
Linear (rope_type "linear"): inv_freq / factor.
Dynamic NTK (rope_type "dynamic"), at the full scaled context L = factor * L0 (the static form an
engine with a prefix cache must use): theta' = theta * (factor * L / L0 - (factor - 1))^(d/(d-2)).
YaRN (rope_type "yarn", Peng et al. 2023, "NTK-by-parts" + attention temperature):
  for pair i, r_i = L0 / wavelen_i rotations over the original context L0; pairs with r > beta_fast
  keep their frequency, pairs with r < beta_slow are interpolated (inv_freq / factor), and between
  them a linear ramp over the pair index, from the dimension where r = beta_fast
  (d * ln(L0 / (beta_fast * 2 pi)) / (2 ln theta), floored) to where r = beta_slow (ceiled).
  cos and sin are multiplied by the attention factor: config's attention_factor, else
  (0.1 * mscale * ln(factor) + 1) / (0.1 * mscale_all_dim * ln(factor) + 1) when both are given,
  else 0.1 * ln(factor) + 1.
  DeepSeek V2/V3 (MLA) also multiply the softmax scale by (0.1 * mscale_all_dim * ln(factor) + 1)^2.
Frequencies are spread over the rotated dims (spec.rotary_dim: the head, its rotary part
(partial_rotary_factor), or MLA's qk_rope_head_dim).
"""
import math
import numpy as np


def base_inv_freq(head_dim, theta):
    i = np.arange(head_dim // 2, dtype=np.float64)
    return theta ** (-2.0 * i / head_dim)


def llama3_scaled_inv_freq(inv_freq, scaling):
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    original_max = scaling["original_max_position_embeddings"]
    low_freq_wavelen = original_max / low_freq_factor
    high_freq_wavelen = original_max / high_freq_factor
    scaled = np.empty_like(inv_freq)
    for i, freq in enumerate(inv_freq):
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            scaled[i] = freq
        elif wavelen > low_freq_wavelen:
            scaled[i] = freq / factor
        else:
            smooth = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            scaled[i] = freq * ((1 - smooth) / factor + smooth)
    return scaled


def scaling_type(spec):
    scaling = spec.rope_scaling
    return scaling.get("rope_type", scaling.get("type")) if scaling else None


def yarn_scaled_inv_freq(spec):
    scaling, d, theta = spec.rope_scaling, spec.rotary_dim, spec.rope_theta
    factor = scaling["factor"]
    original = scaling.get("original_max_position_embeddings") or spec.max_position_embeddings
    beta_fast, beta_slow = scaling.get("beta_fast", 32.0), scaling.get("beta_slow", 1.0)
    inv_freq = base_inv_freq(d, theta)
    wavelength = 2 * math.pi / inv_freq
    rotations = original / wavelength                 # turns over the original context, per pair

    def dim_with_rotations(r):                        # the pair index i where rotations(i) == r
        return d * math.log(original / (r * 2 * math.pi)) / (2 * math.log(theta))

    start, end = dim_with_rotations(beta_fast), dim_with_rotations(beta_slow)
    if scaling.get("truncate", True):
        start, end = math.floor(start), math.ceil(end)
    start, end = max(start, 0), min(end, d - 1)
    if end == start:
        end += 0.001
    interpolated_share = np.clip((np.arange(d // 2) - start) / (end - start), 0.0, 1.0)
    assert np.all(interpolated_share[rotations > beta_fast * 1.0001] < 1)  # fast pairs are not interpolated fully
    return inv_freq / factor * interpolated_share + inv_freq * (1 - interpolated_share)


def attention_factor_for(spec):
    """The magnitude YaRN gives cos and sin; 1 for every other RoPE."""
    if scaling_type(spec) != "yarn":
        return 1.0
    scaling = spec.rope_scaling
    if scaling.get("attention_factor"):
        return float(scaling["attention_factor"])
    factor = scaling["factor"]
    if scaling.get("mscale") and scaling.get("mscale_all_dim"):
        return yarn_mscale(factor, scaling["mscale"]) / yarn_mscale(factor, scaling["mscale_all_dim"])
    return yarn_mscale(factor, 1.0)


def yarn_mscale(factor, m):
    """YaRN's temperature 0.1 * m * ln(factor) + 1 (1 when not extending)."""
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def mla_softmax_scale(spec):
    """DeepSeek's attention scale: 1/sqrt(q/k head dim), times yarn_mscale(factor,
    mscale_all_dim)^2 under YaRN scaling that gives mscale_all_dim."""
    scale = 1.0 / math.sqrt(spec.qk_nope_head_dim + spec.qk_rope_head_dim)
    scaling = spec.rope_scaling
    if scaling_type(spec) == "yarn" and scaling.get("mscale_all_dim"):
        scale *= yarn_mscale(scaling["factor"], scaling["mscale_all_dim"]) ** 2
    return scale


def inv_freq_for(spec):
    kind = scaling_type(spec)
    if kind is None:
        return base_inv_freq(spec.rotary_dim, spec.rope_theta)
    scaling = spec.rope_scaling
    if kind == "llama3":
        return llama3_scaled_inv_freq(base_inv_freq(spec.rotary_dim, spec.rope_theta), scaling)
    if kind == "linear":
        return base_inv_freq(spec.rotary_dim, spec.rope_theta) / scaling["factor"]
    if kind == "dynamic":
        factor, d = scaling["factor"], spec.rotary_dim
        original = scaling.get("original_max_position_embeddings") or spec.max_position_embeddings
        longest = factor * original
        theta = spec.rope_theta * (factor * longest / original - (factor - 1)) ** (d / (d - 2))
        return base_inv_freq(d, theta)
    if kind == "yarn":
        return yarn_scaled_inv_freq(spec)
    raise ValueError(f"unsupported rope_scaling {scaling}")


def gguf_rope_freqs(spec):
    """GGUF rope_freqs.weight (how llama.cpp stores llama3 scaling): the divisors with
    scaled = base / rope_freqs, or None. Other scalings go in rope.scaling.* metadata."""
    if scaling_type(spec) != "llama3":
        return None
    scaled = inv_freq_for(spec)
    base = base_inv_freq(spec.rotary_dim, spec.rope_theta)
    if np.array_equal(scaled, base):
        return None
    return (base / scaled).astype(np.float32)


def apply_rope_half(x, positions, inv_freq, magnitude=1.0):
    """HF convention: pairs (i, i + d/2). x: [T, heads, d], positions: [T].
    magnitude: YaRN's attention factor, multiplying cos and sin."""
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]   # [T, d/2]
    cos, sin = magnitude * np.cos(angles)[:, None, :], magnitude * np.sin(angles)[:, None, :]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def apply_rope_interleaved(x, positions, inv_freq, magnitude=1.0):
    """GGUF llama convention: pairs (2i, 2i + 1). x: [T, heads, d]."""
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = magnitude * np.cos(angles)[:, None, :], magnitude * np.sin(angles)[:, None, :]
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x_even * cos - x_odd * sin
    out[..., 1::2] = x_even * sin + x_odd * cos
    return out
