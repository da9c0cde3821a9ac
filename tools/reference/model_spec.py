"""The tiny test models and benchmark presets, described once.

A ModelSpec holds exactly the hyper-parameters an HF config.json carries;
config_json() writes it, and the forward pass and GGUF metadata read it.
"""
from dataclasses import dataclass, field
import json
import os

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOKENIZER_DIRS = {
    "qwen3": os.path.join(REPO_ROOT, "assets/npm/tokenizer-qwen3/models"),
    "llama3": os.path.join(REPO_ROOT, "assets/npm/tokenizer-llama3_1/models"),
    "deepseek_v3": os.path.join(REPO_ROOT, "assets/npm/tokenizer-deepseek_v3/models"),
    "gptoss": os.path.join(REPO_ROOT, "assets/npm/tokenizer-gptoss/models"),
}


@dataclass
class ModelSpec:
    name: str
    hf_architecture: str          # LlamaForCausalLM / MistralForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM /
                                  # Qwen3MoeForCausalLM / Glm4MoeForCausalLM / DeepseekV2ForCausalLM /
                                  # DeepseekV3ForCausalLM / GptOssForCausalLM
    hf_model_type: str            # llama / mistral / qwen2 / qwen3 / qwen3_moe / glm4_moe / deepseek_v2 / deepseek_v3 /
                                  # gpt_oss
    gguf_architecture: str        # llama / qwen2 / qwen3 / qwen3moe / glm4moe / deepseek2 / gpt-oss
    tokenizer: str                # key of TOKENIZER_DIRS
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int                 # of q and k (MLA: qk_nope_head_dim + qk_rope_head_dim)
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    rope_theta: float
    rms_norm_eps: float
    tie_word_embeddings: bool
    attention_bias: bool = False   # q/k/v biases (Qwen2)
    qk_norm: bool = False          # per-head RMSNorm of q and k (Qwen3)
    rope_scaling: dict = None      # HF rope_scaling (llama3, yarn, linear, dynamic), or None
    # the sliding window: a windowed layer's query at p sees keys p - sliding_window < j <= p only;
    # Mistral windows every layer, gpt-oss the even ones (layer_window)
    sliding_window: int = None
    num_experts: int = 0           # > 0: every layer's MLP is a mixture of experts
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    norm_topk_prob: bool = False
    # GLM-4.5 (glm4_moe): partial rotary, leading dense layers, sigmoid router with a
    # score-correction bias and group-limited top-k, routed scaling, shared experts, MTP layers
    partial_rotary_factor: float = 1.0
    first_k_dense_replace: int = 0
    n_shared_experts: int = 0
    n_group: int = 1
    topk_group: int = 1
    routed_scaling_factor: float = 1.0
    num_nextn_predict_layers: int = 0   # extra layers past num_layers in the files, never run
    # gpt-oss (gpt_oss): attention sinks, q/k/v/o biases, even layers windowed, a router with a bias
    # whose top-k logits are softmaxed, fused interleaved gate_up experts with biases and the
    # clamped SwiGLU at swiglu_limit (alpha 1.702)
    swiglu_limit: float = 7.0
    # a chat template (path under the repository) for a tokenizer package that ships none: the HF
    # directory gets it as chat_template.jinja (transformers' own file), GGUF files in their metadata
    chat_template: str = None
    # DeepSeek V3 (deepseek_v3): multi-head latent attention. q from a q_lora_rank bottleneck
    # (None: a plain q_proj); keys and values decompressed per head from one kv_lora_rank latent,
    # plus one qk_rope_head_dim RoPE key shared by all heads; v_head_dim per head
    q_lora_rank: int = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # DeepSeek V2 (deepseek_v2) routes with a softmax over all experts (topk_method greedy, no groups,
    # no correction bias), times routed_scaling_factor. gguf_kv_b: GGUF files in llama.cpp's older
    # deepseek2 layout (one attn_kv_b = kv_b_proj, per-head key/value lengths, head_count_kv = heads)
    gguf_kv_b: bool = False
    num_shards: int = 1            # safetensors shards of the HF checkpoint
    bos_token_id: int = None
    eos_token_ids: list = field(default_factory=list)  # first one goes to config.json
    pad_token_id: int = None
    add_bos_token: bool = False
    seed: int = 0
    super_blocks: bool = False     # written in the 256-value block types (variants.SUPER_BLOCK_VARIANTS)
    num_greedy_tokens: int = None  # reference greedy tokens per prompt (None: gen_models' default, 32)

    @property
    def is_moe(self):
        return self.num_experts > 0

    @property
    def sigmoid_router(self):
        return self.hf_model_type in ("glm4_moe", "deepseek_v3")

    @property
    def is_gpt_oss(self):
        return self.hf_model_type == "gpt_oss"

    def layer_window(self, layer):
        """The sliding window of `layer` (None: full attention)."""
        if not self.sliding_window or (self.is_gpt_oss and layer % 2 == 1):
            return None
        return self.sliding_window

    @property
    def is_mla(self):
        return self.kv_lora_rank > 0

    @property
    def rotary_dim(self):
        """Dims of a q/k head that RoPE rotates (and its frequencies are spread over)."""
        if self.is_mla:
            return self.qk_rope_head_dim
        return int(self.head_dim * self.partial_rotary_factor)

    def is_moe_layer(self, layer):
        return self.is_moe and layer >= self.first_k_dense_replace

    def config_json(self, torch_dtype):
        config = {
            "architectures": [self.hf_architecture],
            "model_type": self.hf_model_type,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "vocab_size": self.vocab_size,
            "max_position_embeddings": self.max_position_embeddings,
            "rope_theta": self.rope_theta,
            "rope_scaling": self.rope_scaling,
            "rms_norm_eps": self.rms_norm_eps,
            "hidden_act": "silu",
            "tie_word_embeddings": self.tie_word_embeddings,
            "attention_dropout": 0.0,
            "initializer_range": 0.02,
            "use_cache": True,
            "torch_dtype": torch_dtype,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": self.eos_token_ids[0] if self.eos_token_ids else None,
        }
        if self.is_mla:   # DeepSeek's configs give the MLA dims instead
            del config["head_dim"]
        if self.hf_model_type == "llama":
            config.update(attention_bias=False, mlp_bias=False, pretraining_tp=1)
        if self.hf_model_type == "mistral":
            config.update(sliding_window=self.sliding_window)
        if self.hf_model_type in ("qwen2", "qwen3", "qwen3_moe"):
            config.update(use_sliding_window=False, sliding_window=None,
                          max_window_layers=self.num_layers)
        if self.hf_model_type in ("qwen3", "qwen3_moe"):
            config.update(attention_bias=False)
        if self.hf_model_type == "glm4_moe":
            config.update(n_routed_experts=self.num_experts, n_shared_experts=self.n_shared_experts,
                          num_experts_per_tok=self.num_experts_per_tok,
                          moe_intermediate_size=self.moe_intermediate_size,
                          norm_topk_prob=self.norm_topk_prob, first_k_dense_replace=self.first_k_dense_replace,
                          n_group=self.n_group, topk_group=self.topk_group,
                          routed_scaling_factor=self.routed_scaling_factor,
                          partial_rotary_factor=self.partial_rotary_factor, use_qk_norm=self.qk_norm,
                          attention_bias=self.attention_bias,
                          num_nextn_predict_layers=self.num_nextn_predict_layers)
        elif self.hf_model_type == "deepseek_v2":
            config.update(q_lora_rank=self.q_lora_rank, kv_lora_rank=self.kv_lora_rank,
                          qk_nope_head_dim=self.qk_nope_head_dim, qk_rope_head_dim=self.qk_rope_head_dim,
                          v_head_dim=self.v_head_dim, n_routed_experts=self.num_experts,
                          n_shared_experts=self.n_shared_experts, num_experts_per_tok=self.num_experts_per_tok,
                          moe_intermediate_size=self.moe_intermediate_size,
                          first_k_dense_replace=self.first_k_dense_replace, moe_layer_freq=1,
                          n_group=self.n_group, topk_group=self.topk_group, topk_method="greedy",
                          scoring_func="softmax", routed_scaling_factor=self.routed_scaling_factor,
                          norm_topk_prob=self.norm_topk_prob, attention_bias=self.attention_bias,
                          ep_size=1, aux_loss_alpha=0.001, seq_aux=True)
        elif self.hf_model_type == "deepseek_v3":
            config.update(q_lora_rank=self.q_lora_rank, kv_lora_rank=self.kv_lora_rank,
                          qk_nope_head_dim=self.qk_nope_head_dim, qk_rope_head_dim=self.qk_rope_head_dim,
                          v_head_dim=self.v_head_dim, n_routed_experts=self.num_experts,
                          n_shared_experts=self.n_shared_experts, num_experts_per_tok=self.num_experts_per_tok,
                          moe_intermediate_size=self.moe_intermediate_size,
                          first_k_dense_replace=self.first_k_dense_replace, moe_layer_freq=1,
                          n_group=self.n_group, topk_group=self.topk_group, topk_method="noaux_tc",
                          scoring_func="sigmoid", routed_scaling_factor=self.routed_scaling_factor,
                          norm_topk_prob=self.norm_topk_prob, attention_bias=self.attention_bias,
                          ep_size=1, aux_loss_alpha=0.001, seq_aux=True,
                          num_nextn_predict_layers=self.num_nextn_predict_layers)
        elif self.is_gpt_oss:
            config.update(num_local_experts=self.num_experts, num_experts_per_tok=self.num_experts_per_tok,
                          experts_per_token=self.num_experts_per_tok, intermediate_size=self.moe_intermediate_size,
                          sliding_window=self.sliding_window,
                          layer_types=["full_attention" if l % 2 else "sliding_attention"
                                       for l in range(self.num_layers)],
                          swiglu_limit=self.swiglu_limit, attention_bias=True,
                          initial_context_length=self.rope_scaling["original_max_position_embeddings"],
                          router_aux_loss_coef=0.9, output_router_logits=False,
                          pad_token_id=self.pad_token_id)
        elif self.is_moe:
            config.update(num_experts=self.num_experts,
                          num_experts_per_tok=self.num_experts_per_tok,
                          moe_intermediate_size=self.moe_intermediate_size,
                          norm_topk_prob=self.norm_topk_prob,
                          decoder_sparse_step=1, mlp_only_layers=[],
                          output_router_logits=False, router_aux_loss_coef=0.001)
        return config

    def generation_config_json(self):
        return {"bos_token_id": self.bos_token_id,
                "eos_token_id": self.eos_token_ids if len(self.eos_token_ids) > 1 else self.eos_token_ids[0],
                "pad_token_id": self.pad_token_id,
                "do_sample": False}


QWEN_VOCAB = 151936       # like the released Qwen models: ids 151669.. are padding rows
LLAMA3_VOCAB = 128256
QWEN_TOKENS = dict(tokenizer="qwen3", vocab_size=QWEN_VOCAB, bos_token_id=151643,
                   eos_token_ids=[151645, 151643], pad_token_id=151643, add_bos_token=False)
DEEPSEEK_V3_VOCAB = 129280   # like DeepSeek V3: ids 128815.. are padding rows
# <｜begin▁of▁sentence｜> 0, <｜end▁of▁sentence｜> 1 (also the tokenizer_config's pad token)
DEEPSEEK_V3_TOKENS = dict(tokenizer="deepseek_v3", vocab_size=DEEPSEEK_V3_VOCAB, bos_token_id=0,
                          eos_token_ids=[1], pad_token_id=1, add_bos_token=True)

GPTOSS_VOCAB = 201088   # like gpt-oss: ids 200019.. are padding rows
# <|return|> 200002 and <|call|> 200012 end a turn (generation_config's eos ids, with <|endoftext|>
# 199999, also the pad token); o200k_harmony adds no BOS (<|startoftext|> is 199998)
GPTOSS_TOKENS = dict(tokenizer="gptoss", vocab_size=GPTOSS_VOCAB, bos_token_id=199998,
                     eos_token_ids=[200002, 199999, 200012], pad_token_id=199999, add_bos_token=False)

# Seeds picked by tools/search_seeds.py: no near-tie in the f32 greedy
# continuations of the golden prompts, and continuations that do not just repeat.
TINY_MODELS = {
    "tiny-llama3": ModelSpec(
        name="tiny-llama3", hf_architecture="LlamaForCausalLM", hf_model_type="llama",
        gguf_architecture="llama", tokenizer="llama3", vocab_size=LLAMA3_VOCAB,
        hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
        intermediate_size=128, max_position_embeddings=4096, rope_theta=500000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False,
        # a small original context so all three llama3 regimes (kept, smoothed, divided) occur
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
        bos_token_id=128000, eos_token_ids=[128009, 128001, 128008], pad_token_id=None,
        add_bos_token=True, seed=10001),
    # Mistral 7B v0.1's blocks (Llama's, with GQA 4:2 and theta 1e4) and its sliding window, at a
    # window the golden prompts' 6, 15 and 48 tokens plus 32 greedy ones all go past; head_dim 32
    # takes the fast attention kernels. Llama 3's tokenizer stands in for Mistral's.
    "tiny-mistral": ModelSpec(
        name="tiny-mistral", hf_architecture="MistralForCausalLM", hf_model_type="mistral",
        gguf_architecture="llama", tokenizer="llama3", vocab_size=LLAMA3_VOCAB,
        hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=32,
        intermediate_size=128, max_position_embeddings=32768, rope_theta=10000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False, sliding_window=16,
        bos_token_id=128000, eos_token_ids=[128009, 128001, 128008], pad_token_id=None,
        add_bos_token=True, seed=49001),
    "tiny-qwen2": ModelSpec(
        name="tiny-qwen2", hf_architecture="Qwen2ForCausalLM", hf_model_type="qwen2",
        gguf_architecture="qwen2", hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2,
        head_dim=16, intermediate_size=128, max_position_embeddings=32768,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
        # YaRN as Qwen2.5's model card documents it; this original context puts the ramp mid-head
        # (pairs 0-2 kept, 3-4 ramped, 5-7 interpolated) so every YaRN regime occurs
        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
        attention_bias=True, seed=9002, **QWEN_TOKENS),
    "tiny-qwen3": ModelSpec(
        name="tiny-qwen3", hf_architecture="Qwen3ForCausalLM", hf_model_type="qwen3",
        gguf_architecture="qwen3", hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2,
        head_dim=32, intermediate_size=128, max_position_embeddings=40960,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, qk_norm=True,
        seed=4003, **QWEN_TOKENS),
    "tiny-qwen3moe": ModelSpec(
        name="tiny-qwen3moe", hf_architecture="Qwen3MoeForCausalLM", hf_model_type="qwen3_moe",
        gguf_architecture="qwen3moe", hidden_size=64, num_layers=2, num_heads=4,
        num_kv_heads=2, head_dim=32, intermediate_size=128, max_position_embeddings=40960,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=False, qk_norm=True,
        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64, norm_topk_prob=True,
        num_shards=2, seed=2004, **QWEN_TOKENS),
    # GLM-4.5's blocks at tiny size: RoPE on half of each head, layer 0 dense, then 8 routed
    # experts in 2 groups (only the best group competes) with a random score-correction bias,
    # top-2, routed scaling 2.5, one shared expert; plus one MTP layer in the files, never run.
    "tiny-glm4moe": ModelSpec(
        name="tiny-glm4moe", hf_architecture="Glm4MoeForCausalLM", hf_model_type="glm4_moe",
        gguf_architecture="glm4moe", hidden_size=64, num_layers=3, num_heads=4,
        num_kv_heads=2, head_dim=32, intermediate_size=128, max_position_embeddings=131072,
        rope_theta=1000000.0, rms_norm_eps=1e-5, tie_word_embeddings=False, qk_norm=True,
        attention_bias=True, partial_rotary_factor=0.5, first_k_dense_replace=1,
        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64, norm_topk_prob=True,
        n_shared_experts=1, n_group=2, topk_group=1, routed_scaling_factor=2.5,
        num_nextn_predict_layers=1, seed=18005, **QWEN_TOKENS),
    # DeepSeek V3's blocks at tiny size: multi-head latent attention (q through a rank-32
    # bottleneck, k/v decompressed per head from a 64-dim latent, one shared 32-dim RoPE key,
    # interleaved pairs, YaRN), then GLM-4.5's MoE: layer 0 dense, 8 routed experts in 2 groups
    # (one kept), sigmoid scores with a correction bias, top-2, routed scaling 2.5, 1 shared expert.
    "tiny-deepseek3": ModelSpec(
        name="tiny-deepseek3", hf_architecture="DeepseekV3ForCausalLM", hf_model_type="deepseek_v3",
        gguf_architecture="deepseek2", hidden_size=64, num_layers=3, num_heads=4, num_kv_heads=4,
        head_dim=64, intermediate_size=128, max_position_embeddings=16384, rope_theta=10000.0,
        rms_norm_eps=1e-6, tie_word_embeddings=False, q_lora_rank=32, kv_lora_rank=64,
        qk_nope_head_dim=32, qk_rope_head_dim=32, v_head_dim=32,
        # YaRN as DeepSeek V3 writes it; with theta 1e4 over 16 rotary pairs this original context
        # puts the ramp mid-way (pairs 0-5 kept, 6-11 ramped, 12-15 interpolated)
        rope_scaling={"type": "yarn", "rope_type": "yarn", "factor": 4.0,
                      "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                      "mscale": 1.0, "mscale_all_dim": 1.0},
        first_k_dense_replace=1, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64,
        norm_topk_prob=True, n_shared_experts=1, n_group=2, topk_group=1, routed_scaling_factor=2.5,
        seed=80006, **DEEPSEEK_V3_TOKENS),
    # DeepSeek-V2-Lite's variant at tiny size: MLA with no q bottleneck (one q_proj), YaRN with
    # mscale = mscale_all_dim = 0.707 (V2-Lite's), layer 0 dense, then 8 routed experts top-2 by a
    # softmax over all of them (greedy, no groups, no bias), not renormalized, times routed scaling
    # 1.5 (V2-Lite has 1.0; != 1 so the scaling is tested), and 2 shared experts. Its GGUF files are
    # in llama.cpp's older deepseek2 layout (one attn_kv_b, per-head key/value lengths).
    "tiny-deepseek2-lite": ModelSpec(
        name="tiny-deepseek2-lite", hf_architecture="DeepseekV2ForCausalLM", hf_model_type="deepseek_v2",
        gguf_architecture="deepseek2", hidden_size=64, num_layers=3, num_heads=4, num_kv_heads=4,
        head_dim=64, intermediate_size=128, max_position_embeddings=16384, rope_theta=10000.0,
        rms_norm_eps=1e-6, tie_word_embeddings=False, q_lora_rank=None, kv_lora_rank=64,
        qk_nope_head_dim=32, qk_rope_head_dim=32, v_head_dim=32,
        # as tiny-deepseek3's: pairs 0-5 kept, 6-11 ramped, 12-15 interpolated
        rope_scaling={"type": "yarn", "rope_type": "yarn", "factor": 4.0,
                      "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                      "mscale": 0.707, "mscale_all_dim": 0.707},
        first_k_dense_replace=1, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64,
        norm_topk_prob=False, n_shared_experts=2, n_group=1, topk_group=1, routed_scaling_factor=1.5,
        gguf_kv_b=True, seed=130007, **DEEPSEEK_V3_TOKENS),
    # gpt-oss's blocks at tiny size: head_dim 64 and GQA 4:1 (gpt-oss: 64 heads over 8), sinks,
    # q/k/v/o biases, layer 0 windowed (16: the prompts plus 32 greedy tokens go past it) and
    # layer 1 full, YaRN as gpt-oss has it (theta 150000, factor 32 over 4096, ramp ends not
    # truncated), 8 experts top-4 with router and expert biases and the clamped SwiGLU (its gates
    # large enough that the clamp at 7 acts).
    "tiny-gptoss": ModelSpec(
        name="tiny-gptoss", hf_architecture="GptOssForCausalLM", hf_model_type="gpt_oss",
        gguf_architecture="gpt-oss", hidden_size=64, num_layers=2, num_heads=8, num_kv_heads=2,
        head_dim=64, intermediate_size=64, max_position_embeddings=131072, rope_theta=150000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False, attention_bias=True, sliding_window=16,
        rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                      "original_max_position_embeddings": 4096, "truncate": False},
        num_experts=8, num_experts_per_tok=4, moe_intermediate_size=64, norm_topk_prob=True,
        chat_template="tools/templates/harmony.jinja", seed=213008, **GPTOSS_TOKENS),
}

# Matmul in-dims that are multiples of 256, for the K-quants, IQ4_XS and MXFP4 (gguf only).
# Hidden 256 keeps the 151936 x 256 tied embedding (which dominates file size and time)
# small enough for CI; in-dims: 256 (q/k/v/gate/up, attn_output: 4 heads x 64), 512 (down).
SUPER_BLOCK_MODELS = {
    "tiny-qwen3-k": ModelSpec(
        name="tiny-qwen3-k", hf_architecture="Qwen3ForCausalLM", hf_model_type="qwen3",
        gguf_architecture="qwen3", hidden_size=256, num_layers=2, num_heads=4, num_kv_heads=2,
        head_dim=64, intermediate_size=512, max_position_embeddings=40960,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, qk_norm=True,
        # 12 greedy tokens (8 must match for quantized files): each token costs a scalar
        # 151936 x 256 logits matmul in every kernel family, so CI time stays near a minute
        seed=4007, super_blocks=True, num_greedy_tokens=12, **QWEN_TOKENS),
}
# Every model check_golden compares (the super-block one only in its GGUF variants).
GOLDEN_MODELS = {**TINY_MODELS, **SUPER_BLOCK_MODELS}

PRESETS = {
    # Benchmark-sized random model with Qwen3-0.6B's shapes (no reference logits).
    "qwen3-0.6b": ModelSpec(
        name="qwen3-0.6b", hf_architecture="Qwen3ForCausalLM", hf_model_type="qwen3",
        gguf_architecture="qwen3", hidden_size=1024, num_layers=28, num_heads=16,
        num_kv_heads=8, head_dim=128, intermediate_size=3072, max_position_embeddings=40960,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, qk_norm=True,
        seed=2001, **QWEN_TOKENS),
    # The reduced Qwen3-MoE shape of the kernel benchmarks (benchmarks/vs_llamacpp.py): 64 experts,
    # top-8, small expert FFNs, so grouped expert matmuls dominate as in Qwen3-30B-A3B.
    "qwen3-moe-reduced": ModelSpec(
        name="qwen3-moe-reduced", hf_architecture="Qwen3MoeForCausalLM", hf_model_type="qwen3_moe",
        gguf_architecture="qwen3moe", hidden_size=1024, num_layers=12, num_heads=16,
        num_kv_heads=8, head_dim=128, intermediate_size=3072, max_position_embeddings=40960,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=False, qk_norm=True,
        num_experts=64, num_experts_per_tok=8, moe_intermediate_size=512, norm_topk_prob=True,
        seed=2002, **QWEN_TOKENS),
    # DeepSeek V3's attention dims (q_lora 1536, kv_lora 512, nope 128, rope 64, v 128) and YaRN,
    # its MoE routing (8 groups, 4 kept, top-8, 1 shared expert) at 64 experts and 8 layers.
    "deepseek3-reduced": ModelSpec(
        name="deepseek3-reduced", hf_architecture="DeepseekV3ForCausalLM", hf_model_type="deepseek_v3",
        gguf_architecture="deepseek2", hidden_size=2048, num_layers=8, num_heads=16, num_kv_heads=16,
        head_dim=192, intermediate_size=5632, max_position_embeddings=163840, rope_theta=10000.0,
        rms_norm_eps=1e-6, tie_word_embeddings=False, q_lora_rank=1536, kv_lora_rank=512,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
        rope_scaling={"type": "yarn", "rope_type": "yarn", "factor": 40.0,
                      "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                      "mscale": 1.0, "mscale_all_dim": 1.0},
        first_k_dense_replace=1, num_experts=64, num_experts_per_tok=8, moe_intermediate_size=512,
        norm_topk_prob=True, n_shared_experts=1, n_group=8, topk_group=4, routed_scaling_factor=2.5,
        seed=2003, **DEEPSEEK_V3_TOKENS),
    # gpt-oss-20b's blocks (head_dim 64, GQA 8:1, sinks, window 128 on the even layers, YaRN,
    # 32 experts top-4 with biases and the clamped SwiGLU, its 201,088-row vocabulary) at hidden
    # 1024 and 12 layers: ~1.6 B parameters, ~0.39 B active per token (half of them the output head).
    "gpt-oss-reduced": ModelSpec(
        name="gpt-oss-reduced", hf_architecture="GptOssForCausalLM", hf_model_type="gpt_oss",
        gguf_architecture="gpt-oss", hidden_size=1024, num_layers=12, num_heads=16, num_kv_heads=2,
        head_dim=64, intermediate_size=1024, max_position_embeddings=131072, rope_theta=150000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False, attention_bias=True, sliding_window=128,
        rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                      "original_max_position_embeddings": 4096, "truncate": False},
        num_experts=32, num_experts_per_tok=4, moe_intermediate_size=1024, norm_topk_prob=True,
        seed=2004, **GPTOSS_TOKENS),
}
PRESET_GGUF_DTYPES = ["bf16", "q8_0", "q4_0"]


def load_tokenizer_files(spec):
    directory = TOKENIZER_DIRS[spec.tokenizer]
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
        tokenizer_json = json.load(f)
    with open(os.path.join(directory, "tokenizer_config.json"), encoding="utf-8") as f:
        tokenizer_config = json.load(f)
    if spec.chat_template:
        with open(os.path.join(REPO_ROOT, spec.chat_template), encoding="utf-8") as f:
            tokenizer_config["chat_template"] = f.read()
    return directory, tokenizer_json, tokenizer_config
