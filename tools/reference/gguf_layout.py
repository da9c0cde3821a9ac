"""How an HF checkpoint maps onto a llama.cpp-style GGUF file: tensor names,
the Llama q/k row permutation, stacked MoE experts, DeepSeek's kv_b_proj split
into attn_k_b / attn_v_b (or kept whole as attn_kv_b, llama.cpp's older deepseek2 layout),
metadata and the tokenizer vocabulary."""
import numpy as np

from . import rope

TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED = 1, 3, 4, 5

_LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "mlp.gate.weight": "ffn_gate_inp.weight",
    # GLM-4.5 / DeepSeek V3
    "mlp.gate.e_score_correction_bias": "exp_probs_b.bias",
    "mlp.shared_experts.gate_proj.weight": "ffn_gate_shexp.weight",
    "mlp.shared_experts.up_proj.weight": "ffn_up_shexp.weight",
    "mlp.shared_experts.down_proj.weight": "ffn_down_shexp.weight",
    # DeepSeek's latent attention (kv_b_proj is split, split_kv_b, unless spec.gguf_kv_b)
    "self_attn.kv_b_proj.weight": "attn_kv_b.weight",
    "self_attn.q_a_proj.weight": "attn_q_a.weight",
    "self_attn.q_a_layernorm.weight": "attn_q_a_norm.weight",
    "self_attn.q_b_proj.weight": "attn_q_b.weight",
    "self_attn.kv_a_proj_with_mqa.weight": "attn_kv_a_mqa.weight",
    "self_attn.kv_a_layernorm.weight": "attn_kv_a_norm.weight",
    # gpt-oss
    "self_attn.o_proj.bias": "attn_output.bias",
    "self_attn.sinks": "attn_sinks.weight",
    # a multi-token-prediction layer's own tensors (llama.cpp's blk.N.nextn.*)
    "eh_proj.weight": "nextn.eh_proj.weight",
    "enorm.weight": "nextn.enorm.weight",
    "hnorm.weight": "nextn.hnorm.weight",
    "shared_head.norm.weight": "nextn.shared_head_norm.weight",
}
# glm4moe and gpt-oss call the post-attention norm after HF's module, not ffn_norm; gpt-oss's
# router is HF's mlp.router (mlp.gate elsewhere)
_ARCH_LAYER_NAMES = {"glm4moe": {"post_attention_layernorm.weight": "post_attention_norm.weight"},
                     "gpt-oss": {"post_attention_layernorm.weight": "post_attention_norm.weight",
                                 "mlp.router.weight": "ffn_gate_inp.weight", "mlp.router.bias": "ffn_gate_inp.bias"}}
_GLOBAL_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
_EXPERT_PROJECTIONS = {"gate_proj": "ffn_gate_exps.weight", "up_proj": "ffn_up_exps.weight",
                       "down_proj": "ffn_down_exps.weight"}


def gguf_name(hf_name, arch=None):
    if hf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[hf_name]
    parts = hf_name.split(".")
    assert parts[:2] == ["model", "layers"], hf_name
    rest = ".".join(parts[3:])
    return f"blk.{parts[2]}.{_ARCH_LAYER_NAMES.get(arch, {}).get(rest) or _LAYER_NAMES[rest]}"


def split_kv_b(kv_b, spec):
    """kv_b_proj [heads * (nope + v), kv_lora] -> (attn_k_b [heads, kv_lora, nope],
    attn_v_b [heads, v, kv_lora]) as llama.cpp's MLA layout stores it: per head, the key rows
    transposed (so k_b maps q_nope into the latent: q_lat = k_b @ q_nope), the value rows as they
    are (out = v_b @ (probs @ c))."""
    nope = spec.qk_nope_head_dim
    per_head = kv_b.reshape(spec.num_heads, nope + spec.v_head_dim, spec.kv_lora_rank)
    return (np.ascontiguousarray(per_head[:, :nope, :].transpose(0, 2, 1)),
            np.ascontiguousarray(per_head[:, nope:, :]))


def join_kv_b(k_b, v_b):
    """Inverse of split_kv_b."""
    per_head = np.concatenate([k_b.transpose(0, 2, 1), v_b], axis=1)
    return per_head.reshape(-1, per_head.shape[-1])


# gpt-oss's fused HF expert tensors -> llama.cpp's stacked ones, {experts, out, in} (biases
# {experts, out}): gate_up_proj's even columns are the gate, its odd ones the up projection.
FUSED_EXPERTS = ("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias", "mlp.experts.down_proj",
                 "mlp.experts.down_proj_bias")


def is_fused_expert(hf_name):
    return hf_name.split(".", 3)[-1] in FUSED_EXPERTS


def fused_expert_targets(hf_name, shape):
    """-> [(GGUF name, shape)] that one fused expert tensor of `shape` becomes."""
    blk = "blk." + hf_name.split(".")[2]
    leaf = hf_name.split(".", 3)[-1]
    if leaf == "mlp.experts.gate_up_proj":   # [E, in, 2 out]
        part = (shape[0], shape[2] // 2, shape[1])
        return [(f"{blk}.ffn_gate_exps.weight", part), (f"{blk}.ffn_up_exps.weight", part)]
    if leaf == "mlp.experts.gate_up_proj_bias":
        part = (shape[0], shape[1] // 2)
        return [(f"{blk}.ffn_gate_exps.bias", part), (f"{blk}.ffn_up_exps.bias", part)]
    if leaf == "mlp.experts.down_proj":   # [E, in, out]
        return [(f"{blk}.ffn_down_exps.weight", (shape[0], shape[2], shape[1]))]
    return [(f"{blk}.ffn_down_exps.bias", tuple(shape))]


def split_fused_experts(hf_name, array):
    """-> [(GGUF name, array)] of one fused expert tensor (fused_expert_targets' names and shapes)."""
    names = [name for name, _ in fused_expert_targets(hf_name, array.shape)]
    if array.ndim == 3:   # {E, in, out} matrices -> {E, out, in}
        parts = [array[:, :, 0::2], array[:, :, 1::2]] if len(names) == 2 else [array]
        parts = [p.transpose(0, 2, 1) for p in parts]
    else:
        parts = [array[:, 0::2], array[:, 1::2]] if len(names) == 2 else [array]
    return [(name, np.ascontiguousarray(p)) for name, p in zip(names, parts)]


def join_fused_expert(hf_name, parts):
    """Inverse of split_fused_experts: the arrays it returned, in its order -> the HF tensor."""
    leaf = hf_name.split(".", 3)[-1]
    if leaf in ("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias"):
        gate, up = parts
        if leaf.endswith("_bias"):
            joined = np.empty(gate.shape[:1] + (2 * gate.shape[1],), dtype=gate.dtype)
            joined[:, 0::2], joined[:, 1::2] = gate, up
        else:
            joined = np.empty(gate.shape[:1] + (gate.shape[2], 2 * gate.shape[1]), dtype=gate.dtype)
            joined[:, :, 0::2], joined[:, :, 1::2] = gate.transpose(0, 2, 1), up.transpose(0, 2, 1)
        return joined
    (down,) = parts
    return down if leaf.endswith("_bias") else np.ascontiguousarray(down.transpose(0, 2, 1))


def join_fused_experts(gguf_tensors, layer):
    """One layer's stacked GGUF expert tensors -> {HF name: array} of its fused ones."""
    blk, hf = f"blk.{layer}.", f"model.layers.{layer}."
    sources = {"mlp.experts.gate_up_proj": ("ffn_gate_exps.weight", "ffn_up_exps.weight"),
               "mlp.experts.gate_up_proj_bias": ("ffn_gate_exps.bias", "ffn_up_exps.bias"),
               "mlp.experts.down_proj": ("ffn_down_exps.weight",),
               "mlp.experts.down_proj_bias": ("ffn_down_exps.bias",)}
    return {hf + leaf: join_fused_expert(hf + leaf, [gguf_tensors[blk + n] for n in names])
            for leaf, names in sources.items()}


def gguf_tensor_name(hf_name, arch=None):
    """As gguf_name, and an expert's projection -> its stacked blk.N.ffn_*_exps tensor."""
    if ".mlp.experts." in hf_name:
        parts = hf_name.split(".")
        return f"blk.{parts[2]}.{_EXPERT_PROJECTIONS[parts[6]]}"
    return gguf_name(hf_name, arch)


def interleave_rope_rows(w, num_heads):
    """HF rotate_half pairs (i, i+d/2) -> GGUF llama interleaved pairs (2i, 2i+1):
    within each head, new row order is [0, d/2, 1, d/2+1, ...]. w: [heads*d, ...]."""
    head_dim = w.shape[0] // num_heads
    return (w.reshape(num_heads, 2, head_dim // 2, *w.shape[1:])
             .swapaxes(1, 2).reshape(w.shape))


def deinterleave_rope_rows(w, num_heads):
    head_dim = w.shape[0] // num_heads
    return (w.reshape(num_heads, head_dim // 2, 2, *w.shape[1:])
             .swapaxes(1, 2).reshape(w.shape))


class GGUFTensorPlan:
    """One GGUF tensor: its name, shape (outermost-first), whether it takes the
    file's dtype (matrices) or stays F32 (1-D tensors, the MoE router), and a
    function producing its float32 rows in chunks from HF tensors."""
    def __init__(self, name, shape, takes_file_dtype, produce_chunks):
        self.name, self.shape = name, tuple(shape)
        self.takes_file_dtype = takes_file_dtype
        self.produce_chunks = produce_chunks


def tensor_plan(spec, hf_infos, get_hf_chunks):
    """hf_infos: weights.tensor_infos(spec); get_hf_chunks(hf_name) -> iterator of row chunks."""
    def whole(hf_name):
        return np.concatenate(list(get_hf_chunks(hf_name)), axis=0)

    plan = []
    rope_freqs = rope.gguf_rope_freqs(spec)
    if rope_freqs is not None:
        plan.append(GGUFTensorPlan("rope_freqs.weight", rope_freqs.shape, False, lambda: [rope_freqs]))
    stacked_done = set()
    for info in hf_infos:
        name = info.name
        if is_fused_expert(name):
            matrix = info.kind != "bias"
            for index, (target, shape) in enumerate(fused_expert_targets(name, info.shape)):
                plan.append(GGUFTensorPlan(target, shape, matrix,
                                           lambda name=name, index=index:
                                           [split_fused_experts(name, whole(name))[index][1]]))
            continue
        if ".mlp.experts." in name:
            parts = name.split(".")
            layer, projection = parts[2], parts[6]
            key = (layer, projection)
            if key in stacked_done:
                continue
            stacked_done.add(key)
            names = [f"model.layers.{layer}.mlp.experts.{e}.{projection}.weight" for e in range(spec.num_experts)]
            shape = (spec.num_experts,) + info.shape
            plan.append(GGUFTensorPlan(f"blk.{layer}.{_EXPERT_PROJECTIONS[projection]}", shape, True,
                                       lambda names=names: [np.stack([whole(n) for n in names])]))
            continue
        if name.endswith("self_attn.kv_b_proj.weight") and not spec.gguf_kv_b:
            layer = name.split(".")[2]
            k_b_shape = (spec.num_heads, spec.kv_lora_rank, spec.qk_nope_head_dim)
            v_b_shape = (spec.num_heads, spec.v_head_dim, spec.kv_lora_rank)
            plan.append(GGUFTensorPlan(f"blk.{layer}.attn_k_b.weight", k_b_shape, True,
                                       lambda name=name: [split_kv_b(whole(name), spec)[0]]))
            plan.append(GGUFTensorPlan(f"blk.{layer}.attn_v_b.weight", v_b_shape, True,
                                       lambda name=name: [split_kv_b(whole(name), spec)[1]]))
            continue
        target = gguf_name(name, spec.gguf_architecture)
        is_router = name.endswith(("mlp.gate.weight", "mlp.router.weight"))
        takes_file_dtype = info.is_matrix and not is_router
        needs_permute = spec.gguf_architecture == "llama" and (
            "self_attn.q_proj." in name or "self_attn.k_proj." in name)
        if needs_permute:
            num_heads = spec.num_heads if "q_proj" in name else spec.num_kv_heads
            produce = lambda name=name, num_heads=num_heads: [interleave_rope_rows(whole(name), num_heads)]
        else:
            produce = lambda name=name: get_hf_chunks(name)
        plan.append(GGUFTensorPlan(target, info.shape, takes_file_dtype, produce))
    # llama.cpp's order: embeddings first, output tensors last (any order is valid GGUF)
    return plan


def hf_from_gguf(spec, gguf_tensors, unpermute=True):
    """Inverse mapping: GGUF name -> array  =>  HF name -> array (unstacked; Llama q/k
    rows un-permuted unless unpermute=False; DeepSeek's attn_k_b / attn_v_b joined into kv_b_proj,
    an older file's attn_kv_b taken as it is)."""
    inverse_global = {v: k for k, v in _GLOBAL_NAMES.items()}
    inverse_layer = {v: k for k, v in _LAYER_NAMES.items()}
    inverse_layer.update({v: k for k, v in _ARCH_LAYER_NAMES.get(spec.gguf_architecture, {}).items()})
    inverse_experts = {v: k for k, v in _EXPERT_PROJECTIONS.items()}
    out = {}
    for name, value in gguf_tensors.items():
        if name == "rope_freqs.weight":
            continue
        if spec.is_gpt_oss and ("_exps." in name):
            if name.endswith(".ffn_gate_exps.weight"):
                out.update(join_fused_experts(gguf_tensors, name.split(".")[1]))
            continue
        if name in inverse_global:
            out[inverse_global[name]] = value
            continue
        _, layer, rest = name.split(".", 2)
        if rest == "attn_k_b.weight":
            out[f"model.layers.{layer}.self_attn.kv_b_proj.weight"] = join_kv_b(
                value, gguf_tensors[f"blk.{layer}.attn_v_b.weight"])
            continue
        if rest == "attn_v_b.weight":
            continue
        if rest in inverse_experts:
            for expert in range(value.shape[0]):
                out[f"model.layers.{layer}.mlp.experts.{expert}.{inverse_experts[rest]}.weight"] = value[expert]
            continue
        hf_name = f"model.layers.{layer}.{inverse_layer[rest]}"
        if unpermute and spec.gguf_architecture == "llama" and rest.startswith(("attn_q.", "attn_k.")):
            value = deinterleave_rope_rows(value, spec.num_heads if rest.startswith("attn_q.") else spec.num_kv_heads)
        out[hf_name] = value
    return out


def add_model_metadata(writer, spec, dtype_name, file_type):
    arch = spec.gguf_architecture
    writer.add_string("general.architecture", arch)
    writer.add_string("general.name", spec.name)
    writer.add_u32("general.file_type", file_type)
    if dtype_name not in ("f32", "f16", "bf16"):
        writer.add_u32("general.quantization_version", 2)
    writer.add_u32(f"{arch}.context_length", spec.max_position_embeddings)
    writer.add_u32(f"{arch}.embedding_length", spec.hidden_size)
    writer.add_u32(f"{arch}.block_count", spec.num_layers + spec.num_nextn_predict_layers)
    writer.add_u32(f"{arch}.feed_forward_length", spec.intermediate_size)
    writer.add_u32(f"{arch}.attention.head_count", spec.num_heads)
    if spec.is_mla and spec.gguf_kv_b:
        # llama.cpp's older deepseek2 layout (one attn_kv_b): the per-head sizes after
        # decompression, as for multi-head attention; no *_mla keys
        writer.add_u32(f"{arch}.attention.head_count_kv", spec.num_heads)
        writer.add_u32(f"{arch}.attention.key_length", spec.qk_nope_head_dim + spec.qk_rope_head_dim)
        writer.add_u32(f"{arch}.attention.value_length", spec.v_head_dim)
        if spec.q_lora_rank:
            writer.add_u32(f"{arch}.attention.q_lora_rank", spec.q_lora_rank)
        writer.add_u32(f"{arch}.attention.kv_lora_rank", spec.kv_lora_rank)
    elif spec.is_mla:
        # llama.cpp's MLA layout: one KV "head" (the latent c and k_pe, as cached) of
        # key_length = kv_lora + rope, value_length = kv_lora; the per-head dims after
        # decompression in the *_mla keys
        writer.add_u32(f"{arch}.attention.head_count_kv", 1)
        writer.add_u32(f"{arch}.attention.key_length", spec.kv_lora_rank + spec.qk_rope_head_dim)
        writer.add_u32(f"{arch}.attention.value_length", spec.kv_lora_rank)
        writer.add_u32(f"{arch}.attention.key_length_mla", spec.qk_nope_head_dim + spec.qk_rope_head_dim)
        writer.add_u32(f"{arch}.attention.value_length_mla", spec.v_head_dim)
        if spec.q_lora_rank:
            writer.add_u32(f"{arch}.attention.q_lora_rank", spec.q_lora_rank)
        writer.add_u32(f"{arch}.attention.kv_lora_rank", spec.kv_lora_rank)
    else:
        writer.add_u32(f"{arch}.attention.head_count_kv", spec.num_kv_heads)
        writer.add_u32(f"{arch}.attention.key_length", spec.head_dim)
        writer.add_u32(f"{arch}.attention.value_length", spec.head_dim)
    writer.add_f32(f"{arch}.attention.layer_norm_rms_epsilon", spec.rms_norm_eps)
    writer.add_f32(f"{arch}.rope.freq_base", spec.rope_theta)
    writer.add_u32(f"{arch}.rope.dimension_count", spec.rotary_dim)
    writer.add_u32(f"{arch}.vocab_size", spec.vocab_size)
    if spec.sliding_window:
        # llama.cpp's key for its windowed families; its converter writes none for Mistral
        writer.add_u32(f"{arch}.attention.sliding_window", spec.sliding_window)
    kind = rope.scaling_type(spec)
    if kind in ("yarn", "linear"):   # llama3 goes in rope_freqs.weight
        writer.add_string(f"{arch}.rope.scaling.type", kind)
        writer.add_f32(f"{arch}.rope.scaling.factor", spec.rope_scaling["factor"])
        original = spec.rope_scaling.get("original_max_position_embeddings")
        if original:
            writer.add_u32(f"{arch}.rope.scaling.original_context_length", original)
        if spec.is_mla and spec.rope_scaling.get("mscale_all_dim"):
            # llama.cpp's deepseek2: softmax scale * (1 + log_mul * ln(factor))^2; it gives cos/sin
            # no YaRN factor (HF's mscale / mscale_all_dim, 1 as DeepSeek's configs have them)
            writer.add_f32(f"{arch}.rope.scaling.yarn_log_multiplier", 0.1 * spec.rope_scaling["mscale_all_dim"])
    if spec.is_moe:
        writer.add_u32(f"{arch}.expert_count", spec.num_experts)
        writer.add_u32(f"{arch}.expert_used_count", spec.num_experts_per_tok)
        writer.add_u32(f"{arch}.expert_feed_forward_length", spec.moe_intermediate_size)
        writer.add_bool(f"{arch}.expert_weights_norm", spec.norm_topk_prob)
    if arch in ("glm4moe", "deepseek2"):
        writer.add_u32(f"{arch}.expert_shared_count", spec.n_shared_experts)
        writer.add_u32(f"{arch}.leading_dense_block_count", spec.first_k_dense_replace)
        writer.add_f32(f"{arch}.expert_weights_scale", spec.routed_scaling_factor)
        # llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX (1) / _SIGMOID (2)
        writer.add_u32(f"{arch}.expert_gating_func", 2 if spec.sigmoid_router else 1)
        writer.add_u32(f"{arch}.expert_group_count", spec.n_group)
        writer.add_u32(f"{arch}.expert_group_used_count", spec.topk_group)
    if arch == "glm4moe":
        writer.add_u32(f"{arch}.nextn_predict_layers", spec.num_nextn_predict_layers)


def num_text_tokens(tokenizer_json):
    """Ids below this are ordinary BPE tokens (model.vocab); above are added tokens/padding."""
    return max(tokenizer_json["model"]["vocab"].values()) + 1


def vocabulary(tokenizer_json, vocab_size):
    """-> (tokens by id, token types by id), padded to vocab_size with [PAD{id}] / unused."""
    tokens = [None] * vocab_size
    types = [TOKEN_UNUSED] * vocab_size
    for text, token_id in tokenizer_json["model"]["vocab"].items():
        tokens[token_id], types[token_id] = text, TOKEN_NORMAL
    for added in tokenizer_json["added_tokens"]:
        token_id = added["id"]
        if tokens[token_id] is not None and tokens[token_id] != added["content"]:
            raise ValueError(f"token id {token_id} is both {tokens[token_id]!r} and {added['content']!r}")
        tokens[token_id] = added["content"]
        types[token_id] = TOKEN_CONTROL if added["special"] else TOKEN_USER_DEFINED
    for token_id in range(vocab_size):
        if tokens[token_id] is None:
            tokens[token_id] = f"[PAD{token_id}]"
    return tokens, types


def merges(tokenizer_json):
    """tokenizer.json stores merges as "a b" strings or as [a, b] pairs."""
    return [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in tokenizer_json["model"]["merges"]]


# llama.cpp's names for the pre-tokenizer regexes of each tokenizer
GGUF_PRE_TOKENIZER = {"llama3": "llama-bpe", "qwen3": "qwen2", "deepseek_v3": "deepseek-v3", "gptoss": "gpt-4o"}


def add_tokenizer_metadata(writer, spec, tokenizer_json, tokenizer_config):
    from gguf_writer import INT32, STRING  # noqa: E402 (tools/ is on sys.path)
    max_id = max(max(tokenizer_json["model"]["vocab"].values()),
                 max(a["id"] for a in tokenizer_json["added_tokens"]))
    if max_id >= spec.vocab_size:
        raise ValueError(f"{spec.name}: tokenizer id {max_id} >= vocab_size {spec.vocab_size}")
    tokens, types = vocabulary(tokenizer_json, spec.vocab_size)
    writer.add_string("tokenizer.ggml.model", "gpt2")
    writer.add_string("tokenizer.ggml.pre", GGUF_PRE_TOKENIZER[spec.tokenizer])
    writer.add_array("tokenizer.ggml.tokens", STRING, tokens)
    writer.add_array("tokenizer.ggml.token_type", INT32, types)
    writer.add_array("tokenizer.ggml.merges", STRING, merges(tokenizer_json))
    if spec.bos_token_id is not None:
        writer.add_u32("tokenizer.ggml.bos_token_id", spec.bos_token_id)
    writer.add_u32("tokenizer.ggml.eos_token_id", spec.eos_token_ids[0])
    if spec.pad_token_id is not None:
        writer.add_u32("tokenizer.ggml.padding_token_id", spec.pad_token_id)
    writer.add_bool("tokenizer.ggml.add_bos_token", spec.add_bos_token)
    template = tokenizer_config.get("chat_template")
    if isinstance(template, str):
        writer.add_string("tokenizer.chat_template", template)
