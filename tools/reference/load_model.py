"""Loads a model file back into (ModelSpec, HF-layout weights) from what the
files alone say: an HF directory (config.json + safetensors) or a GGUF file
(metadata + tensors). Used by the self-checks and the stand-in engine."""
import json
import os

import numpy as np

from . import gguf_layout, model_spec, rope, safetensors_io

_HF_ARCH = {"llama": ("LlamaForCausalLM", "llama"), "qwen2": ("Qwen2ForCausalLM", "qwen2"),
            "qwen3": ("Qwen3ForCausalLM", "qwen3"), "qwen3moe": ("Qwen3MoeForCausalLM", "qwen3_moe"),
            "glm4moe": ("Glm4MoeForCausalLM", "glm4_moe"),
            "deepseek2": ("DeepseekV3ForCausalLM", "deepseek_v3"), "gpt-oss": ("GptOssForCausalLM", "gpt_oss")}
# deepseek2 files of DeepSeek V2 (softmax router, expert_gating_func 1 or absent) and V3 (sigmoid, 2)
_DEEPSEEK_V2 = ("DeepseekV2ForCausalLM", "deepseek_v2")
_GGUF_ARCH_BY_MODEL_TYPE = {**{v[1]: k for k, v in _HF_ARCH.items()}, "deepseek_v2": "deepseek2",
                           "mistral": "llama"}
_TOKENIZER_BY_MODEL_TYPE = {"llama": "llama3", "mistral": "llama3", "deepseek_v2": "deepseek_v3",
                            "deepseek_v3": "deepseek_v3", "gpt_oss": "gptoss"}   # others: qwen3


def spec_from_hf_config(config, name="model"):
    model_type = config["model_type"]
    gguf_arch = _GGUF_ARCH_BY_MODEL_TYPE[model_type]
    eos = config.get("eos_token_id")
    glm = model_type == "glm4_moe"
    deepseek = model_type in ("deepseek_v2", "deepseek_v3")
    gpt_oss = model_type == "gpt_oss"
    if model_type == "deepseek_v2" and (config.get("scoring_func", "softmax"), config.get("topk_method", "greedy")) \
            != ("softmax", "greedy"):   # the reference runs V2's softmax router with greedy top-k only
        raise ValueError(f"{name}: DeepSeek V2 router {config.get('scoring_func')} / {config.get('topk_method')}")
    arch_fields = {}
    if glm or deepseek:   # GLM-4.5 took DeepSeek V3's MoE and its config keys
        arch_fields = dict(
            first_k_dense_replace=config.get("first_k_dense_replace", 0),
            n_shared_experts=config.get("n_shared_experts", 0), n_group=config.get("n_group", 1),
            topk_group=config.get("topk_group", 1),
            routed_scaling_factor=config.get("routed_scaling_factor", 1.0),
            num_nextn_predict_layers=config.get("num_nextn_predict_layers", 0))
    if glm:
        arch_fields.update(partial_rotary_factor=config.get("partial_rotary_factor", 0.5))
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    if deepseek:
        arch_fields.update(q_lora_rank=config.get("q_lora_rank"), kv_lora_rank=config["kv_lora_rank"],
                           qk_nope_head_dim=config["qk_nope_head_dim"],
                           qk_rope_head_dim=config["qk_rope_head_dim"], v_head_dim=config["v_head_dim"])
        head_dim = config["qk_nope_head_dim"] + config["qk_rope_head_dim"]
    if gpt_oss:
        # the reference windows the even layers; a config saying otherwise is not gpt-oss's
        expected_types = ["full_attention" if l % 2 else "sliding_attention" for l in range(config["num_hidden_layers"])]
        if config.get("layer_types", expected_types) != expected_types:
            raise ValueError(f"{name}: gpt-oss layer_types other than alternating sliding/full")
        arch_fields.update(swiglu_limit=config.get("swiglu_limit", 7.0), num_experts=config["num_local_experts"],
                           moe_intermediate_size=config["intermediate_size"], norm_topk_prob=True,
                           attention_bias=True)
    return model_spec.ModelSpec(**{
        "num_experts": config.get("n_routed_experts", 0) if glm or deepseek else config.get("num_experts", 0),
        "moe_intermediate_size": config.get("moe_intermediate_size", 0),
        "norm_topk_prob": config.get("norm_topk_prob", False),
        "attention_bias": model_type == "qwen2" or ((glm or deepseek) and config.get("attention_bias", False)),
        **arch_fields},
        name=name, hf_architecture=config["architectures"][0], hf_model_type=model_type,
        gguf_architecture=gguf_arch, tokenizer=_TOKENIZER_BY_MODEL_TYPE.get(model_type, "qwen3"),
        hidden_size=config["hidden_size"], num_layers=config["num_hidden_layers"],
        num_heads=config["num_attention_heads"], num_kv_heads=config["num_key_value_heads"],
        head_dim=head_dim,
        intermediate_size=config["intermediate_size"], vocab_size=config["vocab_size"],
        max_position_embeddings=config["max_position_embeddings"], rope_theta=config["rope_theta"],
        rms_norm_eps=config["rms_norm_eps"], tie_word_embeddings=config.get("tie_word_embeddings", False),
        qk_norm=model_type in ("qwen3", "qwen3_moe") or (glm and config.get("use_qk_norm", False)),
        rope_scaling=config.get("rope_scaling"),
        sliding_window=config.get("sliding_window") if model_type in ("mistral", "gpt_oss") else None,
        num_experts_per_tok=config.get("num_experts_per_tok", 0),
        bos_token_id=config.get("bos_token_id"),
        eos_token_ids=eos if isinstance(eos, list) else [eos])


def load_hf_dir(directory):
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    spec = spec_from_hf_config(config, os.path.basename(os.path.normpath(directory)))
    return spec, safetensors_io.read_checkpoint(directory)


_TOKENIZER_BY_PRE = {v: k for k, v in gguf_layout.GGUF_PRE_TOKENIZER.items()}


def spec_from_gguf(gguf):
    meta = gguf.metadata
    arch = meta["general.architecture"]
    hf_architecture, model_type = _HF_ARCH[arch]
    tensors = gguf.tensor_infos

    def get(key, default=None):
        return meta.get(f"{arch}.{key}", default)

    rope_scaling = None
    if get("rope.scaling.type", "none") != "none":
        rope_scaling = {"rope_type": get("rope.scaling.type"), "factor": float(get("rope.scaling.factor")),
                        "original_max_position_embeddings": get("rope.scaling.original_context_length")}
        if get("rope.scaling.yarn_log_multiplier") is not None:
            # deepseek2 keeps only 0.1 * mscale_all_dim and gives cos/sin no YaRN factor, i.e. takes
            # HF's mscale equal to it (mscale / mscale_all_dim = 1), as DeepSeek V2/V3's configs have it
            mscale = round(float(get("rope.scaling.yarn_log_multiplier")) / 0.1, 6)
            rope_scaling.update(mscale=mscale, mscale_all_dim=mscale)

    arch_fields = {}
    nextn = 0
    num_kv_heads, head_dim = get("attention.head_count_kv"), get("attention.key_length")
    if arch in ("glm4moe", "deepseek2"):
        nextn = get("nextn_predict_layers", 0)
        arch_fields = dict(
            first_k_dense_replace=get("leading_dense_block_count", 0),
            n_shared_experts=get("expert_shared_count", 0), n_group=get("expert_group_count", 1),
            topk_group=get("expert_group_used_count", 1),
            routed_scaling_factor=float(get("expert_weights_scale", 1.0)), num_nextn_predict_layers=nextn)
    if arch == "gpt-oss":
        # llama.cpp's gpt-oss keeps YaRN's ramp ends fractional, as gpt-oss's config.json says
        rope_scaling["beta_fast"], rope_scaling["beta_slow"] = (float(get("rope.scaling.yarn_beta_fast", 32.0)),
                                                                float(get("rope.scaling.yarn_beta_slow", 1.0)))
        rope_scaling["truncate"] = False
    if arch == "glm4moe":
        arch_fields.update(partial_rotary_factor=get("rope.dimension_count") / get("attention.key_length"))
    if arch == "deepseek2":
        # the MLA layout's one KV head is the cached latent; the HF config counts the heads after
        # decompression (num_key_value_heads = num_attention_heads). Older files (one attn_kv_b)
        # give the per-head lengths in key_length / value_length and have no *_mla keys.
        kv_b = "blk.0.attn_kv_b.weight" in tensors
        rope_dim = get("rope.dimension_count")
        head_dim = get("attention.key_length" if kv_b else "attention.key_length_mla")
        v_head_dim = get("attention.value_length" if kv_b else "attention.value_length_mla")
        num_kv_heads = get("attention.head_count")
        arch_fields.update(q_lora_rank=get("attention.q_lora_rank") or None,
                           kv_lora_rank=get("attention.kv_lora_rank"),
                           qk_nope_head_dim=head_dim - rope_dim, qk_rope_head_dim=rope_dim,
                           v_head_dim=v_head_dim, gguf_kv_b=kv_b)
        if get("expert_gating_func", 1) == 1:   # llama.cpp's default for deepseek2: softmax (V2)
            hf_architecture, model_type = _DEEPSEEK_V2
    return model_spec.ModelSpec(**arch_fields,
        name=meta.get("general.name", arch), hf_architecture=hf_architecture, hf_model_type=model_type,
        gguf_architecture=arch, tokenizer=_TOKENIZER_BY_PRE.get(meta.get("tokenizer.ggml.pre"), "qwen3"),
        hidden_size=get("embedding_length"), num_layers=get("block_count") - nextn,
        num_heads=get("attention.head_count"), num_kv_heads=num_kv_heads,
        head_dim=head_dim, intermediate_size=get("feed_forward_length"),
        vocab_size=get("vocab_size", len(meta["tokenizer.ggml.tokens"])),
        max_position_embeddings=get("context_length"), rope_theta=float(get("rope.freq_base")),
        rope_scaling=rope_scaling, rms_norm_eps=float(get("attention.layer_norm_rms_epsilon")),
        sliding_window=get("attention.sliding_window") if arch in ("llama", "gpt-oss") else None,
        tie_word_embeddings="output.weight" not in tensors,
        attention_bias="blk.0.attn_q.bias" in tensors, qk_norm="blk.0.attn_q_norm.weight" in tensors,
        num_experts=get("expert_count", 0), num_experts_per_tok=get("expert_used_count", 0),
        moe_intermediate_size=get("expert_feed_forward_length", 0),
        norm_topk_prob=bool(get("expert_weights_norm", False)),
        bos_token_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_token_ids=[meta.get("tokenizer.ggml.eos_token_id")])


def load_gguf(path, gguf_layout_rope=False):
    """-> (spec, HF-named weights, rope_style, inv_freq).
    gguf_layout_rope=False: q/k rows un-permuted back to HF order (rotate_half RoPE).
    gguf_layout_rope=True: llama q/k kept as stored, RoPE applied to interleaved
    pairs with the file's rope_freqs: checks the permutation independently."""
    import gguf_reader  # tools/ on sys.path
    gguf = gguf_reader.GGUFFile(path)
    spec = spec_from_gguf(gguf)
    tensors = {name: gguf.tensor(name) for name in gguf.tensor_infos}
    if spec.rope_scaling:   # yarn / linear from the metadata (llama3 comes as rope_freqs below)
        inv_freq = rope.inv_freq_for(spec)
    else:
        inv_freq = rope.base_inv_freq(spec.rotary_dim, spec.rope_theta)
    if "rope_freqs.weight" in tensors:
        inv_freq = inv_freq / tensors["rope_freqs.weight"].astype(np.float64)
    interleaved = gguf_layout_rope and spec.gguf_architecture == "llama"
    weights = gguf_layout.hf_from_gguf(spec, tensors, unpermute=not interleaved)
    return spec, weights, "interleaved" if interleaved else "half", inv_freq, gguf
