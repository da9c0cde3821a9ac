#!/usr/bin/env python3
"""Self-checks of the reference and the files it writes (no llmesh needed).

  /usr/bin/python3 tools/check_reference.py --models DIR [--only NAME] [--quick]

  numerics   Q8_0/Q4_0/bf16 against hand-worked examples and error bounds
  rope       llama3 scaling regimes; GGUF rope_freqs consistent with them
  blocks     GLM-4.5's partial rotary and grouped sigmoid router; DeepSeek's MLA: YaRN over
             the rope dims, and the absorbed form (scores and values against the cached latent)
             == the naive per-head form the reference runs
  files      each HF dir / GGUF file read back (own readers) equals the weights
             the reference used for that variant; metadata and vocabulary
  forward    incremental (KV cache) logits == full-sequence logits; the f32 GGUF, run
             from its metadata and tensors alone (Llama: permuted q/k, interleaved RoPE,
             rope_freqs; DeepSeek: attn_k_b / attn_v_b, YaRN log multiplier) == HF layout;
             stored reference logits reproduce
  budget     golden tolerances vs the logit change when every matmul input is
             rounded to bf16/f16 or quantized to Q8_0 (what an engine may do)
Exit status 0 when everything holds.
"""
import argparse
import dataclasses
import json
import os
import sys

import numpy as np

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS_DIR)
import gen_models  # noqa: E402
import gguf_writer as gw  # noqa: E402
from golden_tolerances import LOGIT_TOLERANCE, SUPER_BLOCK_LABELS  # noqa: E402
from reference import (forward, gguf_layout, load_model, model_spec, numerics, prompts, rope,  # noqa: E402
                       variants, weights)

failures = []


def expect(condition, message):
    status = "ok  " if condition else "FAIL"
    print(f"  [{status}] {message}", flush=True)
    if not condition:
        failures.append(message)


def check_numerics():
    print("numerics")
    # bf16: spacing near 1 is 2^-7; halfway cases round to even
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.0, 1 + 2**-7 + 2**-9], dtype=np.float32)
    expect(np.array_equal(numerics.round_bf16(x), np.array([1.0, 1 + 2**-6, -2.0, 1 + 2**-7], np.float32)),
           "bf16 round-to-nearest-even on hand-worked values")
    # Q4_0: values d*(q-8) with d = 1 and the largest magnitude -8 are exact; q = x + 8
    block = np.array([j - 8 for j in range(16)] + [7 - j for j in range(16)], dtype=np.float32)
    scales, nibbles = numerics.quantize_q4_0(block)
    expect(scales[0] == 1.0 and np.array_equal(nibbles[0], (block + 8).astype(np.uint8)),
           "Q4_0: d = max/-8 with max = -8 -> d = 1, q = x + 8")
    packed = numerics.q4_0_bytes(scales, nibbles)
    expect(len(packed) == 18 and packed[2] == (0 | (15 << 4)) and packed[17] == (15 | (0 << 4)),
           "Q4_0 packing: byte j = q_j | q_(j+16) << 4")
    expect(np.array_equal(numerics.dequantize_q4_0(*numerics.unpack_q4_0(packed, 1), (32,)), block),
           "Q4_0 unpack + dequantize restores exactly representable values")
    # Q8_0: amax 127 -> d = 1, q = round half away from zero
    block = np.linspace(-127, 127, 32).astype(np.float32)
    block[1] = -2.5
    scales, quants = numerics.quantize_q8_0(block)
    expect(scales[0] == 1.0 and quants[0, 1] == -3 and quants[0, 0] == -127,
           "Q8_0: d = amax/127, roundf(-2.5) = -3")
    raw = numerics.q8_0_bytes(scales, quants)
    expect(len(raw) == 34 and np.array_equal(numerics.unpack_q8_0(raw, 1)[1], quants), "Q8_0 pack/unpack")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 96)).astype(np.float32) * np.logspace(-3, 2, 96).astype(np.float32)
    for name, bound_in_d in (("q8_0", 0.5), ("q4_0", 1.0)):
        quantize = numerics.quantize_q8_0 if name == "q8_0" else numerics.quantize_q4_0
        scales, _ = quantize(x)
        d = np.abs(scales.astype(np.float32)).repeat(32).reshape(x.shape)
        err = np.abs(numerics.round_trip(x, name) - x)
        # f16 rounding of d adds up to 2^-11 relative per quantum step (127 or 8 steps)
        steps = 127 if name == "q8_0" else 8
        expect(np.all(err <= d * (bound_in_d + steps * 2**-10) + 1e-30), f"{name} error within its block bound")
    zeros = np.zeros(32, np.float32)
    expect(np.all(numerics.round_trip(zeros, "q8_0") == 0) and np.all(numerics.round_trip(zeros, "q4_0") == 0),
           "all-zero blocks stay zero")


def check_block_types():
    """reference/quants.py: sizes, zero blocks, and one-pass quantizer error on Gaussian rows."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 512)) * 0.02).astype(np.float32)
    # normalized MSE bounds of the simple quantizers (~2x measured on these rows)
    bounds = {"q4_1": 1.5e-2, "q5_0": 4e-3, "q5_1": 4e-3, "q2_k": 0.25, "q3_k": 6e-2, "q4_k": 1.5e-2,
              "q5_k": 4e-3, "q6_k": 1e-3, "q8_k": 1e-4, "iq4_nl": 1.5e-2, "iq4_xs": 1.5e-2, "mxfp4": 3e-2}
    for name, bound in bounds.items():
        raw = numerics.quants.quantize(x, name)
        expect(len(raw) == numerics.quants.nbytes(x.size, name), f"{name}: {len(raw)} bytes")
        err = float(np.mean((numerics.quants.dequantize(raw, name, x.shape) - x) ** 2) / np.mean(x ** 2))
        expect(err < bound, f"{name} round trip nmse {err:.2e} < {bound:.0e}")
        expect(np.all(numerics.round_trip(np.zeros((1, 256), np.float32), name) == 0), f"{name} zeros stay zero")


def check_gguf_bytes():
    """A minimal file compared byte for byte with the layout the GGUF v3 spec gives."""
    import struct
    import tempfile
    print("gguf")
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "t.gguf")
        writer = gw.GGUFWriter(path)
        writer.add_string("general.architecture", "llama")
        writer.add_tensor_info("a", (2, 3), gw.GGML_F32)      # {out=2, in=3} -> dims [3, 2]
        writer.write_header()
        writer.write_tensor("a", [np.arange(6, dtype=np.float32).reshape(2, 3)])
        writer.close()
        data = open(path, "rb").read()

    def string(text):
        return struct.pack("<Q", len(text)) + text.encode()
    header = (b"GGUF" + struct.pack("<IQQ", 3, 1, 2)
              + string("general.alignment") + struct.pack("<II", 4, 32)
              + string("general.architecture") + struct.pack("<I", 8) + string("llama")
              + string("a") + struct.pack("<IQQIQ", 2, 3, 2, 0, 0))
    expected = header + b"\0" * (-len(header) % 32) + np.arange(6, dtype="<f4").tobytes()
    expected += b"\0" * (-len(expected) % 32)
    expect(data == expected, "writer output == spec layout (header, kv, tensor info, aligned data)")


def check_golden_rules():
    """check_golden's pass/fail rules on synthetic engine outputs."""
    import check_golden
    print("golden check rules")
    rng = np.random.default_rng(3)
    ref = rng.standard_normal(1000) * 8
    greedy = [int(np.argmax(ref))] + list(range(1, 32))
    gaps = [5.0] * 32   # well above every dtype's near-tie margin (max |ref| ~ 30)
    gaps[5] = 1e-3   # a near-tie at step 5 for every dtype

    def run(dtype, output_ids, logits=None, router_margins=None):
        entry = {"ids": [1, 2], "greedy_ids": greedy, "greedy_gaps": gaps}
        if router_margins is not None:
            entry["router_margins"] = router_margins
        case = check_golden.Case("m", f"{dtype}-gguf", dtype, 0, entry, "path", ref)
        check_golden.check_case(case, {"prompt_ids": [1, 2], "output_ids": output_ids},
                                ref.astype(np.float32) if logits is None else logits)
        return case
    expect(not run("f32", greedy).failures, "exact output passes")
    expect(run("f32", greedy[:3] + [999] + greedy[4:]).failures, "f32: divergence at a clear step fails")
    expect(not run("f32", greedy[:5] + [999] * 27).failures, "divergence exactly at a near-tie is a tie")
    expect(not run("q8_0", greedy[:12] + [999] * 20).failures, "q8_0: 12 matching tokens pass")
    expect(run("q8_0", greedy[:3] + [999] * 29).failures, "q8_0: divergence at step 3 fails")
    expect(run("f32", greedy[:20]).failures, "a short continuation fails")
    expect(run("f32", greedy, np.full(1000, np.nan, np.float32)).failures, "NaN logits fail")
    expect(run("f32", greedy, (ref * (1 + 1e-3)).astype(np.float32)).failures, "f32: 1e-3 logit error fails")
    expect(not run("bf16", greedy, (ref * (1 + 1e-2)).astype(np.float32)).failures, "bf16: 1e-2 logit error passes")
    moved = (ref * 1.15).astype(np.float32)
    expect(not run("q8_0", greedy, moved, [0.05] * 32).failures, "q8_0: large error after a routing near-tie is noted")
    expect(run("q8_0", greedy, moved, [5.0] * 32).failures, "q8_0: large error without a routing near-tie fails")
    expect(run("f32", greedy, moved, [0.05] * 32).failures, "f32: a 0.05 router margin is no excuse")
    expect(not run("q8_0", greedy[:3] + [999] * 29, None, [5.0, 5.0, 0.05] + [5.0] * 29).failures,
           "q8_0: divergence after a routing near-tie is noted")


def check_rope():
    print("rope")
    spec = model_spec.TINY_MODELS["tiny-llama3"]
    base = rope.base_inv_freq(spec.head_dim, spec.rope_theta)
    scaled = rope.inv_freq_for(spec)
    ratio = base / scaled
    factor = spec.rope_scaling["factor"]
    expect(ratio[0] == 1.0, "highest frequency (wavelength 2*pi < 16) kept")
    expect(np.allclose(ratio[2:], factor), "low frequencies divided by factor 8")
    expect(1.0 < ratio[1] < factor, f"middle frequency smoothly scaled (divisor {ratio[1]:.3f})")
    expect(np.allclose(rope.gguf_rope_freqs(spec), ratio), "GGUF rope_freqs = base / scaled")
    expect(rope.gguf_rope_freqs(model_spec.TINY_MODELS["tiny-qwen3"]) is None, "no rope_freqs without scaling")
    x = np.random.default_rng(1).standard_normal((3, 2, 16))
    positions = np.array([0, 5, 70])
    half = rope.apply_rope_half(x, positions, scaled)
    perm = gguf_layout.interleave_rope_rows(np.arange(16), 1)
    inter = rope.apply_rope_interleaved(x[..., perm], positions, scaled)
    expect(np.allclose(inter, half[..., perm]), "interleaved RoPE on permuted dims == rotate_half RoPE")
    expect(list(perm[:4]) == [0, 8, 1, 9], "permutation row order [0, d/2, 1, d/2+1, ...]")


def check_glm4_moe_blocks():
    """GLM-4.5's partial rotary and sigmoid group-limited router on hand-made inputs."""
    print("glm4moe blocks")
    spec = model_spec.TINY_MODELS["tiny-glm4moe"]
    model = forward.Transformer(spec, {"model.embed_tokens.weight": np.zeros((1, 1)), "lm_head.weight": np.zeros((1, 1))})
    expect(len(model.inv_freq) == spec.rotary_dim // 2 == 8
           and np.allclose(model.inv_freq, spec.rope_theta ** (-np.arange(0, 16, 2) / 16.0)),
           "partial rotary: inv_freq = theta^(-2i/rotary_dim), i < rotary_dim/2")
    x = np.random.default_rng(3).standard_normal((2, 4, spec.head_dim))
    positions = np.array([3, 11])
    y = model.rope(x, positions)
    expect(np.array_equal(y[..., 16:], x[..., 16:]), "partial rotary: dims past rotary_dim pass through")
    theta = positions[:, None, None] * model.inv_freq[None, None, :]
    want = np.concatenate([x[..., :8] * np.cos(theta) - x[..., 8:16] * np.sin(theta),
                           x[..., 8:16] * np.cos(theta) + x[..., :8] * np.sin(theta)], axis=-1)
    expect(np.allclose(y[..., :16], want), "partial rotary: rotate_half pairs (i, i + rotary_dim/2)")
    # experts 0-3 group 0, 4-7 group 1; expert 0 has the best score, but group 1's top-2 sum wins
    logits = np.array([3.0, -3.0, -3.0, -3.0, 1.5, 1.4, -3.0, -3.0])
    chosen, w = model.route_sigmoid(logits, np.zeros(8))
    s = 1 / (1 + np.exp(-logits))
    expect(list(chosen) == [4, 5] and np.allclose(w, 2.5 * s[[4, 5]] / s[[4, 5]].sum()),
           "router: the best group by its top-2 sum, top-2 inside it, normalized sigmoid * routed scaling")
    bias = np.zeros(8)
    bias[7] = 2.0   # the bias changes the choice, not the weight
    chosen, w = model.route_sigmoid(logits, bias)
    expect(list(chosen) == [7, 4] and np.allclose(w, 2.5 * s[[7, 4]] / s[[7, 4]].sum()),
           "router: the correction bias picks expert 7; its weight is its plain sigmoid")


def check_softmax_router():
    """DeepSeek V2's router (scoring_func softmax, topk_method greedy) on hand-made logits."""
    print("deepseek2-lite router")
    spec = model_spec.TINY_MODELS["tiny-deepseek2-lite"]
    model = forward.Transformer(spec, {"model.embed_tokens.weight": np.zeros((1, 1)), "lm_head.weight": np.zeros((1, 1))})
    expect(not spec.sigmoid_router and not spec.norm_topk_prob and spec.routed_scaling_factor == 1.5
           and spec.n_group == 1, "V2-Lite: softmax scores, no groups, top-k not renormalized, routed scaling 1.5")
    logits = np.array([0.5, 2.0, -1.0, 2.0, 1.0, -3.0, 0.0, 1.9])
    p = np.exp(logits) / np.exp(logits).sum()
    chosen, w = model.route_softmax(logits)
    expect(list(chosen) == [1, 3] and np.allclose(w, 1.5 * p[[1, 3]]) and abs(w.sum() - 1.5 * p[[1, 3]].sum()) < 1e-15,
           "router: softmax over all 8 experts, top-2 (a tie goes to the lower id), weights = p * 1.5, not renormalized")
    chosen, _ = model.route_softmax(logits - 100.0)
    expect(list(chosen) == [1, 3], "router: the choice depends only on logit differences")


def check_mla_blocks(name):
    """DeepSeek V3's / V2-Lite's latent attention on random inputs: its YaRN over the rope dims, and the
    identity an engine relies on to attend over the cached latent c without decompressing
    keys and values per head: with W_UK_h / W_UV_h the key / value rows of head h in kv_b_proj,
      q_nope_h . (W_UK_h c_s) = (W_UK_h^T q_nope_h) . c_s     sum_s p_s W_UV_h c_s = W_UV_h (sum_s p_s c_s)
    computed here with the GGUF tensors (attn_k_b = W_UK_h^T per head, attn_v_b = W_UV_h)."""
    import dataclasses
    print(f"{name} blocks")
    spec = dataclasses.replace(model_spec.TINY_MODELS[name], seed=77)
    mscale_all_dim = spec.rope_scaling["mscale_all_dim"]
    w = {info.name: weights.generate_tensor(spec, info, 0) for info in weights.tensor_infos(spec)
         if info.name.startswith("model.layers.0.self_attn.")}
    model = forward.Transformer(spec, {**w, "model.embed_tokens.weight": np.zeros((1, 1)),
                                       "lm_head.weight": np.zeros((1, 1))})
    share = np.log(rope.base_inv_freq(32, spec.rope_theta) / model.inv_freq) / np.log(spec.rope_scaling["factor"])
    expect(len(model.inv_freq) == 16 and np.all(share[:6] == 0) and np.allclose(share[12:], 1)
           and np.all((share[6:12] > 0) & (share[6:12] < 1)),
           "YaRN over the 16 rope pairs: 0-5 kept, 6-11 ramped, 12-15 divided by the factor")
    expect(model.rope_magnitude == 1.0
           and np.isclose(rope.mla_softmax_scale(spec), (0.1 * mscale_all_dim * np.log(4) + 1) ** 2 / 8),
           f"YaRN: cos/sin factor mscale/mscale_all_dim = 1; softmax scale "
           f"(0.1 * {mscale_all_dim} ln 4 + 1)^2 / sqrt(64)")

    rng = np.random.default_rng(12)
    # transformers' DeepSeek V3 de-interleaves the rope dims (0, 2, 4, .., 1, 3, ..) of q and k,
    # then rotates half: the same pairs (2i, 2i+1) as rotating adjacent pairs in place
    x = rng.standard_normal((3, 2, 32))
    order = np.concatenate([np.arange(0, 32, 2), np.arange(1, 32, 2)])
    expect(np.allclose(rope.apply_rope_half(x[..., order], np.array([0, 7, 500]), model.inv_freq),
                       rope.apply_rope_interleaved(x, np.array([0, 7, 500]), model.inv_freq)[..., order]),
           "RoPE on adjacent pairs == transformers' de-interleave + rotate_half")
    x = rng.standard_normal((9, spec.hidden_size))
    positions = np.arange(9) + 100   # after 100 cached positions (random latents and roped k_pe)
    c_cached, k_pe_cached = rng.standard_normal((100, spec.kv_lora_rank)), rng.standard_normal((100, spec.qk_rope_head_dim))
    cache = forward.KVCache(1)
    cache.num_tokens = 100
    cache.keys[0], cache.values[0] = c_cached, k_pe_cached
    naive = np.concatenate([model.mla_attention(0, x[:6], positions[:6], cache),
                            model.mla_attention(0, x[6:], positions[6:], cache)])
    expect(cache.keys[0].shape == (109, spec.kv_lora_rank) and cache.values[0].shape == (109, spec.qk_rope_head_dim),
           "MLA caches only the latent c (kv_lora_rank) and the shared roped k_pe per position")

    p, eps, nope, lora = "model.layers.0.self_attn.", spec.rms_norm_eps, spec.qk_nope_head_dim, spec.kv_lora_rank
    if spec.q_lora_rank:
        q = forward.rms_norm(x @ w[p + "q_a_proj.weight"].T, w[p + "q_a_layernorm.weight"], eps) @ w[p + "q_b_proj.weight"].T
    else:   # V2-Lite: one q_proj, no bottleneck
        expect(p + "q_a_proj.weight" not in w and w[p + "q_proj.weight"].shape == (4 * 64, 64),
               "q_lora_rank None: queries from one q_proj [heads * (nope + rope), hidden]")
        q = x @ w[p + "q_proj.weight"].T
    q = q.reshape(9, spec.num_heads, -1)
    q_pe = rope.apply_rope_interleaved(q[..., nope:], positions, model.inv_freq)
    kv_a = x @ w[p + "kv_a_proj_with_mqa.weight"].T
    c = np.concatenate([c_cached, forward.rms_norm(kv_a[:, :lora], w[p + "kv_a_layernorm.weight"], eps)])
    k_pe = np.concatenate([k_pe_cached, rope.apply_rope_interleaved(kv_a[:, None, lora:], positions, model.inv_freq)[:, 0]])
    k_b, v_b = gguf_layout.split_kv_b(w[p + "kv_b_proj.weight"], spec)       # [H, lora, nope], [H, v, lora]
    q_latent = np.einsum("hln,thn->thl", k_b, q[..., :nope])                 # W_UK_h^T q_nope_h
    scores = (np.einsum("thl,sl->hts", q_latent, c) + np.einsum("thr,sr->hts", q_pe, k_pe)) * rope.mla_softmax_scale(spec)
    scores = np.where(np.arange(109)[None, None, :] > positions[None, :, None], -np.inf, scores)
    context = np.einsum("hts,sl->thl", forward.softmax(scores), c)             # attention over the latent
    absorbed = np.einsum("hvl,thl->thv", v_b, context).reshape(9, -1) @ w[p + "o_proj.weight"].T
    expect(max_rel(absorbed, naive) < 1e-12, f"{'q_proj, ' if not spec.q_lora_rank else ''}absorbed MLA (k_b into q, v_b after attending over c) == naive "
           f"per-head decompression, through the cache (rel {max_rel(absorbed, naive):.1e})")
    expect(np.array_equal(gguf_layout.join_kv_b(k_b, v_b), w[p + "kv_b_proj.weight"]) and k_b.shape == (4, 64, 32)
           and v_b.shape == (4, 32, 64), "kv_b_proj -> attn_k_b [H, kv_lora, nope], attn_v_b [H, v, kv_lora] -> back")


def max_rel(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - b)) / np.max(np.abs(b)))


# what the forward pass reads beyond the basic shapes, compared between a file's spec and the model's
SPEC_FIELDS = ("first_k_dense_replace", "n_shared_experts", "n_group", "topk_group", "routed_scaling_factor",
               "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob", "sigmoid_router", "rotary_dim",
               "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "sliding_window")


def expected_gguf_metadata(spec):
    """Keys whose values differ between architectures (llama.cpp's MLA layout for deepseek2)."""
    arch = spec.gguf_architecture
    if not spec.is_mla:
        return {f"{arch}.attention.key_length": spec.head_dim, f"{arch}.attention.head_count_kv": spec.num_kv_heads}
    if spec.gguf_kv_b:   # llama.cpp's older layout: per-head lengths, no *_mla keys (None: absent)
        expected = {f"{arch}.attention.head_count_kv": spec.num_heads,
                    f"{arch}.attention.key_length": spec.qk_nope_head_dim + spec.qk_rope_head_dim,
                    f"{arch}.attention.value_length": spec.v_head_dim,
                    f"{arch}.attention.key_length_mla": None, f"{arch}.attention.value_length_mla": None}
    else:
        expected = {f"{arch}.attention.head_count_kv": 1,
                    f"{arch}.attention.key_length": spec.kv_lora_rank + spec.qk_rope_head_dim,
                    f"{arch}.attention.value_length": spec.kv_lora_rank,
                    f"{arch}.attention.key_length_mla": spec.qk_nope_head_dim + spec.qk_rope_head_dim,
                    f"{arch}.attention.value_length_mla": spec.v_head_dim}
    expected.update({f"{arch}.attention.kv_lora_rank": spec.kv_lora_rank,
                     f"{arch}.attention.q_lora_rank": spec.q_lora_rank or None,
                     f"{arch}.rope.dimension_count": spec.qk_rope_head_dim,
                     f"{arch}.expert_gating_func": 2 if spec.sigmoid_router else 1,
                     f"{arch}.expert_weights_scale": spec.routed_scaling_factor,
                     f"{arch}.expert_shared_count": spec.n_shared_experts,
                     f"{arch}.rope.scaling.yarn_log_multiplier":
                         float(np.float32(0.1 * spec.rope_scaling["mscale_all_dim"])),
                     "tokenizer.ggml.pre": gguf_layout.GGUF_PRE_TOKENIZER[spec.tokenizer],
                     "tokenizer.ggml.add_bos_token": spec.add_bos_token})
    return expected


def check_model_files(models_dir, spec, hf_weights, reference):
    print(f"{spec.name}: files")
    _, tokenizer_json, tokenizer_config = model_spec.load_tokenizer_files(spec)
    special = {name: tokenizer_config.get(name) for name in ("bos_token", "eos_token")}
    special = {name: t.get("content") if isinstance(t, dict) else t for name, t in special.items()}
    for variant in variants.VARIANTS:
        expected = variants.variant_weights(hf_weights, variant, spec)
        path = os.path.join(models_dir, variant.path(spec.name))
        if variant.container == "safetensors":
            loaded_spec, loaded = load_model.load_hf_dir(path)
            expect(all(getattr(loaded_spec, f) == getattr(spec, f) for f in
                       ("hidden_size", "num_layers", "num_heads", "num_kv_heads", "head_dim", "vocab_size",
                        "rope_theta", "tie_word_embeddings", "num_experts", "rope_scaling") + SPEC_FIELDS),
                   f"{variant.key}: config.json describes the model")
        else:
            loaded_spec, loaded, _, inv_freq, gguf = load_model.load_gguf(path)
            meta = gguf.metadata
            arch_keys = expected_gguf_metadata(spec)
            expect(meta["general.architecture"] == spec.gguf_architecture
                   and meta["general.alignment"] == 32
                   and all(meta.get(key) == value for key, value in arch_keys.items())
                   and all(getattr(loaded_spec, f) == getattr(spec, f) for f in SPEC_FIELDS)
                   and np.allclose(inv_freq, rope.inv_freq_for(spec), rtol=1e-6, atol=0)   # rope_freqs are F32
                   and rope.attention_factor_for(loaded_spec) == rope.attention_factor_for(spec)
                   and (not spec.is_mla or np.isclose(rope.mla_softmax_scale(loaded_spec),
                                                      rope.mla_softmax_scale(spec), rtol=1e-12, atol=0))
                   and meta[f"{spec.gguf_architecture}.context_length"] == spec.max_position_embeddings
                   and loaded_spec.is_moe == spec.is_moe
                   and loaded_spec.tie_word_embeddings == spec.tie_word_embeddings
                   and loaded_spec.gguf_kv_b == spec.gguf_kv_b
                   and (not spec.is_mla or (loaded_spec.hf_model_type, loaded_spec.hf_architecture)
                        == (spec.hf_model_type, spec.hf_architecture))
                   and sum(n.endswith(".attn_kv_b.weight") for n in gguf.tensor_infos)
                   == (spec.num_layers if spec.is_mla and spec.gguf_kv_b else 0)
                   and sum(n.endswith((".attn_k_b.weight", ".attn_v_b.weight")) for n in gguf.tensor_infos)
                   == (2 * spec.num_layers if spec.is_mla and not spec.gguf_kv_b else 0),
                   f"{variant.key}: metadata ({', '.join(k.split('.', 1)[1] for k in arch_keys)}, "
                   "RoPE frequencies and scales as the model's)")
            tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
            vocab = tokenizer_json["model"]["vocab"]
            some_token = next(iter(vocab))
            num_tokenizer_ids = 1 + max(max(vocab.values()), max(a["id"] for a in tokenizer_json["added_tokens"]))
            expect(len(tokens) == spec.vocab_size == len(types) and tokens[vocab[some_token]] == some_token
                   and types[spec.eos_token_ids[0]] == gguf_layout.TOKEN_CONTROL
                   and types[-1] == (gguf_layout.TOKEN_UNUSED if spec.vocab_size > num_tokenizer_ids
                                     else gguf_layout.TOKEN_CONTROL)
                   and len(meta["tokenizer.ggml.merges"]) == len(tokenizer_json["model"]["merges"])
                   and " " in meta["tokenizer.ggml.merges"][0]
                   and meta["tokenizer.ggml.eos_token_id"] == spec.eos_token_ids[0]
                   and meta.get("tokenizer.chat_template") == tokenizer_config.get("chat_template"),
                   f"{variant.key}: vocabulary ({len(tokens)} tokens), merges, special ids, chat template")
            expect(all(special[name] is None or token_id is None or tokens[token_id] == special[name]
                       for name, token_id in (("bos_token", spec.bos_token_id), ("eos_token", spec.eos_token_ids[0]))),
                   f"{variant.key}: BOS / EOS ids are tokenizer_config's bos_token / eos_token")
            wanted_type = gw.GGML_TYPE_BY_NAME[variant.dtype]
            types_ok = all(
                info[1] == (wanted_type if len(info[0]) >= 2 and not name.endswith(("ffn_gate_inp.weight", ".bias"))
                            else gw.GGML_F32)
                for name, info in gguf.tensor_infos.items())
            expect(types_ok, f"{variant.key}: matrices in {variant.dtype}, 1-D tensors, biases and router in F32")
        same = set(loaded) == set(expected) and all(np.array_equal(loaded[n], expected[n]) for n in expected)
        expect(same, f"{variant.key}: {len(loaded)} tensors read back == the reference's weights")


def check_forward(models_dir, spec, hf_weights, reference):
    print(f"{spec.name}: forward")
    model = forward.Transformer(spec, hf_weights)
    entry = reference["variants"]["f32-safetensors"]["prompts"][-1]
    sequence = entry["ids"] + entry["greedy_ids"][:-1]
    full = model.forward(sequence, forward.KVCache(spec.num_layers), all_logits=True)
    full_ids = [int(np.argmax(row)) for row in full[len(entry["ids"]) - 1:]]
    expect(full_ids == entry["greedy_ids"], "full-sequence argmaxes == incremental greedy ids")
    # incremental in uneven chunks vs one pass
    cache, parts = forward.KVCache(spec.num_layers), []
    for begin, end in ((0, 3), (3, 4), (4, 20), (20, len(sequence))):
        parts.append(model.forward(sequence[begin:end], cache, all_logits=True))
    expect(max_rel(np.concatenate(parts), full) < 1e-10, "chunked prefill through the KV cache == one pass")
    if spec.sliding_window:   # else the golden check could not tell a window from full attention
        w = spec.sliding_window
        plain = forward.Transformer(dataclasses.replace(spec, sliding_window=None), hf_weights).forward(
            sequence, forward.KVCache(spec.num_layers), all_logits=True)
        past = max_rel(plain[w:], full[w:])
        expect(max_rel(plain[:w], full[:w]) < 1e-12 and past > 0.1,
               f"sliding window {w}: full attention's logits up to it, others past it (rel {past:.2f})")
    ref_logits = np.fromfile(os.path.join(models_dir, entry["last_logits_file"]), dtype="<f4")
    expect(max_rel(ref_logits, full[len(entry["ids"]) - 1]) < 1e-6, "stored reference logits reproduce")
    # the f32 GGUF run from what the file alone says (as the stand-in engine does)
    path = os.path.join(models_dir, f"{spec.name}-f32.gguf")
    gspec, gweights, rope_style, inv_freq, _ = load_model.load_gguf(path, gguf_layout_rope=True)
    gguf_model = forward.Transformer(gspec, gweights, rope_style=rope_style, inv_freq=inv_freq)
    logits = gguf_model.forward(sequence, forward.KVCache(spec.num_layers), all_logits=True)
    layout = {"llama": "permuted q/k, interleaved RoPE, rope_freqs",
              "deepseek2": ("attn_kv_b" if spec.gguf_kv_b else "attn_k_b / attn_v_b")
              + ", MLA dims and YaRN from the metadata"}.get(spec.gguf_architecture, "")
    expect((rope_style == "interleaved") == (spec.gguf_architecture == "llama") and max_rel(logits, full) < 1e-6,
           f"f32 GGUF ({layout or 'names, metadata'}) == HF layout (rel {max_rel(logits, full):.1e})")
    all_greedy = [i for v in reference["variants"].values() for p in v["prompts"] for i in p["greedy_ids"]]
    expect(not set(all_greedy) & set(spec.eos_token_ids), "no greedy continuation emits an EOS id")
    gaps = {k: min(p["min_gap"] for p in v["prompts"]) for k, v in reference["variants"].items()}
    print("  min top1-top2 greedy gap per variant: " + ", ".join(f"{k} {g:.3f}" for k, g in gaps.items()))
    if spec.is_moe:
        print(f"  min router margin (k-th vs k+1-th expert logit), f32: "
              f"{reference['variants']['f32-safetensors']['min_router_margin']:.4f}")


ACTIVATION_ROUNDINGS = {
    "f16": lambda x: numerics.round_f16(x).astype(np.float64),
    "bf16": lambda x: numerics.round_bf16(x.astype(np.float32)).astype(np.float64),
    "q8_0": lambda x: numerics.round_trip(x.astype(np.float32), "q8_0").astype(np.float64),
    "q8_k": lambda x: numerics.round_trip(x.astype(np.float32), "q8_k").astype(np.float64),
}


def activation_rounding_budget(spec, hf_weights, names=("f16", "bf16", "q8_0")):
    """Largest relative logit change when the engine rounds every matmul input."""
    roundings = {name: ACTIVATION_ROUNDINGS[name] for name in names}
    exact = forward.Transformer(spec, hf_weights)
    rounded = {name: forward.Transformer(spec, hf_weights, round_activations=round_fn)
               for name, round_fn in roundings.items()}
    worst = {}
    for prompt_ids in prompts.prompts_for(spec):
        ref = exact.forward(prompt_ids, forward.KVCache(spec.num_layers))[0]
        for name, model in rounded.items():
            logits = model.forward(prompt_ids, forward.KVCache(spec.num_layers))[0]
            worst[name] = max(worst.get(name, 0.0), max_rel(logits, ref))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", required=True)
    parser.add_argument("--only")
    parser.add_argument("--quick", action="store_true", help="skip the activation-rounding budget")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(model_spec.TINY_MODELS)
    check_numerics()
    check_block_types()
    check_gguf_bytes()
    check_golden_rules()
    check_rope()
    check_glm4_moe_blocks()
    check_mla_blocks("tiny-deepseek3")
    check_mla_blocks("tiny-deepseek2-lite")
    check_softmax_router()
    version = gen_models.generator_version()
    for name in names:
        spec = model_spec.TINY_MODELS[name]
        ref_path = os.path.join(args.models, f"{name}.reference.json")
        reference = json.load(open(ref_path)) if os.path.exists(ref_path) else {}
        if reference.get("generator_version") != version:
            gen_models.generate_tiny(args.models, spec)
            reference = json.load(open(ref_path))
        _, tokenizer_json, _ = model_spec.load_tokenizer_files(spec)
        hf_weights = weights.generate_all(spec, gguf_layout.num_text_tokens(tokenizer_json))
        check_model_files(args.models, spec, hf_weights, reference)
        check_forward(args.models, spec, hf_weights, reference)
        if not args.quick:
            worst = activation_rounding_budget(spec, hf_weights)
            print(f"{spec.name}: activation rounding budget")
            for name_, value in worst.items():
                tolerance = LOGIT_TOLERANCE[name_]
                expect(tolerance >= 1.5 * value,
                       f"{name_} activations move logits by up to {value:.2e}; tolerance {tolerance:.0e}")
            expect(LOGIT_TOLERANCE["q4_0"] >= 1.5 * worst["q8_0"], "q4_0 files (Q8_0 activations) likewise")
    if not args.quick and not args.only:
        # super-block models: their budget assumes Q8_K activations (golden_tolerances.py)
        for spec in model_spec.SUPER_BLOCK_MODELS.values():
            _, tokenizer_json, _ = model_spec.load_tokenizer_files(spec)
            hf_weights = weights.generate_all(spec, gguf_layout.num_text_tokens(tokenizer_json))
            worst = activation_rounding_budget(spec, hf_weights, names=("q8_k",))["q8_k"]
            print(f"{spec.name}: Q8_K activations move logits by up to {worst:.2e}")
            for label in SUPER_BLOCK_LABELS:
                expect(LOGIT_TOLERANCE[label] >= 1.5 * worst,
                       f"{label}: Q8_K activations move logits by up to {worst:.2e}; "
                       f"tolerance {LOGIT_TOLERANCE[label]:.0e}")
    print("all reference self-checks passed" if not failures else f"{len(failures)} self-checks FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
