"""Deterministic random weights in HF layout (names and {out, in} shapes).

Each tensor draws from its own generator seeded by (model seed, crc32(name),
row chunk), so any tensor can be produced alone, in any order, chunk by chunk
(the 0.6B preset streams tensor by tensor without holding the model).

Scales are chosen so activations stay O(1) and the logits spread widely
(std ~ sqrt(hidden)), which keeps greedy argmaxes well separated:
  embeddings / lm_head rows ~ N(0, 1); rows of tokens the tokenizer never
  produces as ordinary text (added/special tokens, padding) are scaled by
  0.05 so a random model does not pick them (no EOS surprises);
  projections ~ N(0, gain^2 / in_dim) (see SUBLAYER_OUTPUT_GAIN); norm weights ~ 1 + N(0, 0.1^2);
  biases ~ N(0, 0.1^2); the sigmoid router's score-correction bias ~ 0.5 + N(0, 0.3^2), large
  enough to change which experts win; gpt-oss's attention sinks ~ N(0, 1.5^2), around the
  scores' range so they take from little to most of a head's attention. gpt-oss's fused expert
  tensors are stored for x @ W ({experts, in, out}): their scale uses the in dim (axis -2).
"""
import zlib
import numpy as np

ROWS_PER_CHUNK = 8192
# o_proj / down_proj gain: the layers' outputs must outweigh the token's own
# embedding in the residual stream, or a tied-embedding model just repeats its
# last token (its own logit ~ |e|^2 wins); ~3-4x keeps greedy output varied.
SUBLAYER_OUTPUT_GAIN = 4.0
RARE_TOKEN_ROW_SCALE = 0.05


class TensorInfo:
    def __init__(self, name, shape, kind, gain=1.0):
        self.name = name
        self.shape = tuple(shape)
        self.kind = kind   # "embedding", "linear", "linear_in_rows" ({..., in, out}), "norm", "bias",
                           # "router_bias", "sink"
        self.gain = gain

    @property
    def is_matrix(self):
        return len(self.shape) >= 2


def tensor_infos(spec):
    """All tensors of the HF checkpoint, in file order."""
    hidden = spec.hidden_size
    infos = [TensorInfo("model.embed_tokens.weight", (spec.vocab_size, hidden), "embedding")]
    for layer in range(spec.num_layers + spec.num_nextn_predict_layers):
        p = f"model.layers.{layer}."
        infos.append(TensorInfo(p + "input_layernorm.weight", (hidden,), "norm"))
        attention = _mla_attention_infos if spec.is_mla else _attention_infos
        infos += attention(spec, p + "self_attn.")
        infos.append(TensorInfo(p + "post_attention_layernorm.weight", (hidden,), "norm"))
        infos += _mlp_infos(spec, layer, p + "mlp.")
        if layer >= spec.num_layers:
            # a multi-token-prediction layer's own tensors (GLM-4.5 / DeepSeek V3)
            infos.append(TensorInfo(p + "enorm.weight", (hidden,), "norm"))
            infos.append(TensorInfo(p + "hnorm.weight", (hidden,), "norm"))
            infos.append(TensorInfo(p + "eh_proj.weight", (hidden, 2 * hidden), "linear"))
            infos.append(TensorInfo(p + "shared_head.norm.weight", (hidden,), "norm"))
    infos.append(TensorInfo("model.norm.weight", (hidden,), "norm"))
    if not spec.tie_word_embeddings:
        infos.append(TensorInfo("lm_head.weight", (spec.vocab_size, hidden), "embedding"))
    return infos


def _attention_infos(spec, p):
    hidden, head_dim = spec.hidden_size, spec.head_dim
    q_dim, kv_dim = spec.num_heads * head_dim, spec.num_kv_heads * head_dim
    infos = [TensorInfo(p + "q_proj.weight", (q_dim, hidden), "linear", 1.5),
             TensorInfo(p + "k_proj.weight", (kv_dim, hidden), "linear", 1.5),
             TensorInfo(p + "v_proj.weight", (kv_dim, hidden), "linear")]
    if spec.attention_bias:
        infos.append(TensorInfo(p + "q_proj.bias", (q_dim,), "bias"))
        infos.append(TensorInfo(p + "k_proj.bias", (kv_dim,), "bias"))
        infos.append(TensorInfo(p + "v_proj.bias", (kv_dim,), "bias"))
    if spec.qk_norm:
        infos.append(TensorInfo(p + "q_norm.weight", (head_dim,), "norm"))
        infos.append(TensorInfo(p + "k_norm.weight", (head_dim,), "norm"))
    infos.append(TensorInfo(p + "o_proj.weight", (hidden, q_dim), "linear", SUBLAYER_OUTPUT_GAIN))
    if spec.is_gpt_oss:
        infos.append(TensorInfo(p + "o_proj.bias", (hidden,), "bias"))
        infos.append(TensorInfo(p + "sinks", (spec.num_heads,), "sink"))
    return infos


def _gpt_oss_mlp_infos(spec, p):
    """gpt-oss's MoE as its HF checkpoints store it: mlp.router (with a bias), and the experts
    fused, gate and up interleaved along the last axis (column 2i gate i, 2i + 1 up i).
    The gate/up gain of 3 takes some gates past swiglu_limit, so the clamp acts."""
    hidden, ffn, experts = spec.hidden_size, spec.moe_intermediate_size, spec.num_experts
    e = p + "experts."
    return [TensorInfo(p + "router.weight", (experts, hidden), "linear", 8.0),
            TensorInfo(p + "router.bias", (experts,), "bias"),
            TensorInfo(e + "gate_up_proj", (experts, hidden, 2 * ffn), "linear_in_rows", 3.0),
            TensorInfo(e + "gate_up_proj_bias", (experts, 2 * ffn), "bias"),
            TensorInfo(e + "down_proj", (experts, ffn, hidden), "linear_in_rows", 0.5 * SUBLAYER_OUTPUT_GAIN),
            TensorInfo(e + "down_proj_bias", (experts, hidden), "bias")]


def _mla_attention_infos(spec, p):
    """DeepSeek's latent attention. Gains give q and k (both parts) the 1.5 of the others;
    kv_b_proj's value rows share it (one tensor), so o_proj's input is 1.5x larger."""
    hidden, heads, rope_dim = spec.hidden_size, spec.num_heads, spec.qk_rope_head_dim
    q_dim = heads * (spec.qk_nope_head_dim + rope_dim)
    if spec.q_lora_rank:
        infos = [TensorInfo(p + "q_a_proj.weight", (spec.q_lora_rank, hidden), "linear"),
                 TensorInfo(p + "q_a_layernorm.weight", (spec.q_lora_rank,), "norm"),
                 TensorInfo(p + "q_b_proj.weight", (q_dim, spec.q_lora_rank), "linear", 1.5)]
    else:
        infos = [TensorInfo(p + "q_proj.weight", (q_dim, hidden), "linear", 1.5)]
    return infos + [
        TensorInfo(p + "kv_a_proj_with_mqa.weight", (spec.kv_lora_rank + rope_dim, hidden), "linear", 1.5),
        TensorInfo(p + "kv_a_layernorm.weight", (spec.kv_lora_rank,), "norm"),
        TensorInfo(p + "kv_b_proj.weight", (heads * (spec.qk_nope_head_dim + spec.v_head_dim), spec.kv_lora_rank),
                   "linear", 1.5),
        TensorInfo(p + "o_proj.weight", (hidden, heads * spec.v_head_dim), "linear", SUBLAYER_OUTPUT_GAIN)]


def _mlp_infos(spec, layer, p):
    hidden = spec.hidden_size
    if spec.is_gpt_oss:
        return _gpt_oss_mlp_infos(spec, p)
    if not spec.is_moe_layer(layer):
        ffn = spec.intermediate_size
        return [TensorInfo(p + "gate_proj.weight", (ffn, hidden), "linear"),
                TensorInfo(p + "up_proj.weight", (ffn, hidden), "linear"),
                TensorInfo(p + "down_proj.weight", (hidden, ffn), "linear", 1.25 * SUBLAYER_OUTPUT_GAIN)]
    ffn = spec.moe_intermediate_size
    # a strong router keeps the top-k choice far from ties (a sigmoid router saturates
    # beyond |logit| ~ 4, so a milder one there)
    infos = [TensorInfo(p + "gate.weight", (spec.num_experts, hidden), "linear",
                        2.0 if spec.sigmoid_router else 4.0)]
    if spec.sigmoid_router:
        infos.append(TensorInfo(p + "gate.e_score_correction_bias", (spec.num_experts,), "router_bias"))
    for expert in range(spec.num_experts):
        e = f"{p}experts.{expert}."
        infos.append(TensorInfo(e + "gate_proj.weight", (ffn, hidden), "linear"))
        infos.append(TensorInfo(e + "up_proj.weight", (ffn, hidden), "linear"))
        infos.append(TensorInfo(e + "down_proj.weight", (hidden, ffn), "linear", 1.25 * SUBLAYER_OUTPUT_GAIN))
    if spec.n_shared_experts:
        shared = ffn * spec.n_shared_experts
        e = f"{p}shared_experts."
        infos.append(TensorInfo(e + "gate_proj.weight", (shared, hidden), "linear"))
        infos.append(TensorInfo(e + "up_proj.weight", (shared, hidden), "linear"))
        infos.append(TensorInfo(e + "down_proj.weight", (hidden, shared), "linear", SUBLAYER_OUTPUT_GAIN))
    return infos


def _rng(spec, name, chunk_index):
    return np.random.default_rng([spec.seed, zlib.crc32(name.encode()), chunk_index])


def generate_rows(spec, info, row_begin, row_end, num_text_tokens):
    """Rows [row_begin, row_end) of a tensor (row = first axis), float32.
    row_begin must be a multiple of ROWS_PER_CHUNK (chunks are the unit of seeding)."""
    assert row_begin % ROWS_PER_CHUNK == 0
    parts = []
    for chunk_begin in range(row_begin, row_end, ROWS_PER_CHUNK):
        chunk_end = min(chunk_begin + ROWS_PER_CHUNK, row_end)
        shape = (chunk_end - chunk_begin,) + info.shape[1:]
        rng = _rng(spec, info.name, chunk_begin // ROWS_PER_CHUNK)
        values = rng.standard_normal(shape, dtype=np.float32)
        if info.kind == "embedding":
            first_rare = max(num_text_tokens, chunk_begin)
            if first_rare < chunk_end:
                values[first_rare - chunk_begin:] *= np.float32(RARE_TOKEN_ROW_SCALE)
        elif info.kind == "linear":
            values *= np.float32(info.gain / np.sqrt(info.shape[-1]))
        elif info.kind == "linear_in_rows":
            values *= np.float32(info.gain / np.sqrt(info.shape[-2]))
        elif info.kind == "sink":
            values *= np.float32(1.5)
        elif info.kind == "norm":
            values = np.float32(1) + np.float32(0.1) * values
        elif info.kind == "bias":
            values *= np.float32(0.1)
        elif info.kind == "router_bias":
            # offset so the winners' choice values stay positive: transformers masks the dropped
            # groups with 0.0 (not -inf), which would otherwise let them back in
            values = np.float32(0.5) + np.float32(0.3) * values
        parts.append(values.astype(np.float32))
    return np.concatenate(parts, axis=0)


def generate_tensor(spec, info, num_text_tokens):
    return generate_rows(spec, info, 0, info.shape[0], num_text_tokens)


def generate_all(spec, num_text_tokens):
    """name -> float32 array, HF layout, for the tiny models."""
    return {info.name: generate_tensor(spec, info, num_text_tokens) for info in tensor_infos(spec)}
