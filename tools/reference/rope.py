"""Rotary position embedding frequencies, from the published definitions.

inv_freq_i = theta^(-2i/d), i = 0 .. d/2-1.
Llama 3 scaling (rope_type "llama3"): with wavelen_i = 2*pi / inv_freq_i,
  low_freq_wavelen  = original_max_position_embeddings / low_freq_factor
  high_freq_wavelen = original_max_position_embeddings / high_freq_factor
  wavelen < high_freq_wavelen  -> inv_freq unchanged
  wavelen > low_freq_wavelen   -> inv_freq / factor
  otherwise smooth = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            inv_freq * ((1 - smooth) / factor + smooth)
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


def inv_freq_for(spec):
    inv_freq = base_inv_freq(spec.head_dim, spec.rope_theta)
    scaling = spec.rope_scaling
    if scaling and scaling.get("rope_type", scaling.get("type")) == "llama3":
        return llama3_scaled_inv_freq(inv_freq, scaling)
    if scaling:
        raise ValueError(f"unsupported rope_scaling {scaling}")
    return inv_freq


def gguf_rope_freqs(spec):
    """GGUF rope_freqs.weight: the divisors with scaled = base / rope_freqs, or None."""
    scaled = inv_freq_for(spec)
    base = base_inv_freq(spec.head_dim, spec.rope_theta)
    if np.array_equal(scaled, base):
        return None
    return (base / scaled).astype(np.float32)


def apply_rope_half(x, positions, inv_freq):
    """HF convention: pairs (i, i + d/2). x: [T, heads, d], positions: [T]."""
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]   # [T, d/2]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def apply_rope_interleaved(x, positions, inv_freq):
    """GGUF llama convention: pairs (2i, 2i + 1). x: [T, heads, d]."""
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x_even * cos - x_odd * sin
    out[..., 1::2] = x_even * sin + x_odd * cos
    return out
