"""Straight numpy forward pass (float64) of Llama 3 / Mistral / Qwen2 / Qwen3 / Qwen3-MoE /
GLM-4.5 (glm4_moe) / DeepSeek V2 (deepseek_v2) / DeepSeek V3 (deepseek_v3) / gpt-oss (gpt_oss)
decoder-only models over HF-layout weights.

Per layer: h += o_proj(attention(rope(q), rope(k), v)) on rmsnorm(h);
           h += mlp(rmsnorm(h)), mlp = SwiGLU or a top-k mixture of SwiGLU experts.
Logits = rmsnorm(h) @ W_out^T (W_out = embeddings when tied).

Mistral, from transformers' modeling_mistral (its sliding-window causal mask): with
sliding_window w the query at position p sees the keys j with p - w < j <= p, in every layer.
The cache keeps all keys; the mask drops the old ones.

GLM-4.5, from transformers' modeling_glm4_moe (Glm4MoeAttention, Glm4MoeMoE):
  RoPE on the first rotary_dim = head_dim * partial_rotary_factor dims of each head
  (rotate_half pairs within them, inv_freq = theta^(-2i/rotary_dim)); the rest pass through.
  Layers < first_k_dense_replace: a dense SwiGLU of intermediate_size.
  Other layers: s = sigmoid(router logits); c = s + e_score_correction_bias; groups of
  E / n_group experts score the sum of their top-2 c; the topk_group best groups are kept;
  the top-k c among their experts win; weights = s at the winners, / their sum (+1e-20)
  when norm_topk_prob, * routed_scaling_factor; plus the shared experts' SwiGLU
  (moe_intermediate_size * n_shared_experts) on every token.
  Layers past num_hidden_layers (MTP) never run.

DeepSeek V3, multi-head latent attention (DeepSeek-V2 paper, section 2.1; HF config semantics),
in the naive form (keys and values decompressed per head):
  q = q_b_proj(rmsnorm(q_a_proj(x))) (q_proj(x) when q_lora_rank is None) -> per head
  [q_nope (qk_nope_head_dim), q_pe (qk_rope_head_dim)];
  kv_a_proj_with_mqa(x) = [c (kv_lora_rank), k_pe (qk_rope_head_dim)], c = rmsnorm(c), k_pe one
  head shared by all heads; kv_b_proj(c) -> per head [k_nope (qk_nope_head_dim), v (v_head_dim)].
  RoPE on q_pe and k_pe only, on adjacent pairs (2i, 2i+1), frequencies over qk_rope_head_dim
  (YaRN's, with its cos/sin factor). scores_h = [q_nope_h, q_pe_h] . [k_nope_h, k_pe] *
  softmax_scale (rope.mla_softmax_scale); out = o_proj(concat_h softmax(scores_h) @ v_h).
  The cache holds what MLA caches: c and the roped k_pe per position. The q_a / kv_a norms
  take rms_norm_eps (DeepSeek's code leaves them at its default 1e-6, as the tiny model's is).
  MoE as GLM-4.5 (sigmoid scores, correction bias, group-limited top-k, routed scaling).

DeepSeek V2 (deepseek_v2; V2-Lite's variant): the same MLA, q from q_proj when q_lora_rank is None;
  MoE router scoring_func "softmax", topk_method "greedy": p = softmax over all routed experts'
  logits, the top-k p win (ties to the lower id), weights = those p (renormalized only when
  norm_topk_prob) * routed_scaling_factor; no correction bias, no groups; shared experts as above.

gpt-oss, from its model card and transformers' GptOss config semantics:
  attention: q/k/v/o with biases; per head a learned sink logit s_h joins the softmax's
  denominator and carries no value: p_j = exp(a_j) / (exp(s_h) + sum_k exp(a_k)); layers with
  layer_types "sliding_attention" (the even ones) see the last sliding_window keys, the others all.
  RoPE rotate_half with YaRN (truncate false: the ramp's ends stay fractional).
  MoE in every layer: logits = router(x) + bias; the top-k logits (ties to the lower id) are
  softmaxed among themselves; each chosen expert e: gu = x @ gate_up_proj[e] + gate_up_proj_bias[e],
  gate = gu[0::2], up = gu[1::2] (interleaved), gate = min(gate, limit), up = clamp(up, -limit,
  limit), y = ((up + 1) * gate * sigmoid(1.702 gate)) @ down_proj[e] + down_proj_bias[e].

`round_activations` (optional) is applied to every matmul input, to estimate how
much an engine that rounds or quantizes activations moves the logits.
"""
import numpy as np

from . import rope


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def silu(x):
    return x / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def top1_and_gap(logits):
    """-> (argmax (lowest id on ties), top-1 minus top-2 logit)."""
    best_id = int(np.argmax(logits))
    best = logits[best_id]
    runner_up = np.max(np.delete(logits, best_id))
    return best_id, float(best - runner_up)


class KVCache:
    def __init__(self, num_layers):
        self.keys = [None] * num_layers     # per layer [S, kv_heads, head_dim]; MLA: latent c [S, kv_lora_rank]
        self.values = [None] * num_layers   # likewise; MLA: roped k_pe [S, qk_rope_head_dim]
        self.num_tokens = 0


class Transformer:
    def __init__(self, spec, weights, rope_style="half", inv_freq=None, round_activations=None):
        """weights: name -> array in HF layout (any float dtype; used as float64).
        rope_style "interleaved" + inv_freq run GGUF-llama-layout q/k weights."""
        self.spec = spec
        self.w = {name: np.asarray(value, dtype=np.float64) for name, value in weights.items()}
        self.rope_style = rope_style
        if inv_freq is None:
            inv_freq = rope.inv_freq_for(spec)   # over spec.rotary_dim (partial rotary, MLA's rope dims)
        self.inv_freq = inv_freq
        self.rope_magnitude = rope.attention_factor_for(spec)
        self.round_activations = round_activations
        self.output_weight = self.w["model.embed_tokens.weight" if spec.tie_word_embeddings
                                    else "lm_head.weight"]
        self.min_router_margin = np.inf   # smallest gap between the k-th and (k+1)-th router logit

    def linear(self, x, name, bias_name=None):
        if self.round_activations is not None:
            x = self.round_activations(x)
        y = x @ self.w[name].T
        if bias_name is not None and bias_name in self.w:
            y = y + self.w[bias_name]
        return y

    def rope(self, x, positions):
        rot = 2 * len(self.inv_freq)        # rotary dims; the rest of the head passes through
        x_rot, x_pass = x[..., :rot], x[..., rot:]
        if self.rope_style == "half":
            x_rot = rope.apply_rope_half(x_rot, positions, self.inv_freq, self.rope_magnitude)
        else:
            x_rot = rope.apply_rope_interleaved(x_rot, positions, self.inv_freq, self.rope_magnitude)
        return np.concatenate([x_rot, x_pass], axis=-1)

    def attention(self, layer, x, positions, cache):
        spec, p = self.spec, f"model.layers.{layer}.self_attn."
        num_tokens, head_dim = x.shape[0], spec.head_dim
        q = self.linear(x, p + "q_proj.weight", p + "q_proj.bias").reshape(num_tokens, spec.num_heads, head_dim)
        k = self.linear(x, p + "k_proj.weight", p + "k_proj.bias").reshape(num_tokens, spec.num_kv_heads, head_dim)
        v = self.linear(x, p + "v_proj.weight", p + "v_proj.bias").reshape(num_tokens, spec.num_kv_heads, head_dim)
        if spec.qk_norm:
            q = rms_norm(q, self.w[p + "q_norm.weight"], spec.rms_norm_eps)
            k = rms_norm(k, self.w[p + "k_norm.weight"], spec.rms_norm_eps)
        q, k = self.rope(q, positions), self.rope(k, positions)
        if cache.keys[layer] is not None:
            k = np.concatenate([cache.keys[layer], k], axis=0)
            v = np.concatenate([cache.values[layer], v], axis=0)
        cache.keys[layer], cache.values[layer] = k, v
        key_positions = np.arange(k.shape[0])          # [S]
        mask = key_positions[None, :] > positions[:, None]   # [T, S] True = future (or out of the window)
        window = spec.layer_window(layer)
        if window:
            mask |= key_positions[None, :] <= positions[:, None] - window
        sinks = self.w.get(p + "sinks")
        heads_per_kv = spec.num_heads // spec.num_kv_heads
        out = np.empty((num_tokens, spec.num_heads, head_dim))
        for head in range(spec.num_heads):
            kv_head = head // heads_per_kv
            scores = q[:, head, :] @ k[:, kv_head, :].T / np.sqrt(head_dim)   # [T, S]
            scores = np.where(mask, -np.inf, scores)
            if sinks is not None:   # one more logit per query, whose value is zero
                probs = softmax(np.concatenate([scores, np.full((num_tokens, 1), sinks[head])], axis=1))[:, :-1]
            else:
                probs = softmax(scores)
            out[:, head, :] = probs @ v[:, kv_head, :]
        return self.linear(out.reshape(num_tokens, -1), p + "o_proj.weight", p + "o_proj.bias")

    def mla_attention(self, layer, x, positions, cache):
        """DeepSeek's multi-head latent attention, keys and values decompressed per head."""
        spec, p = self.spec, f"model.layers.{layer}.self_attn."
        num_tokens, num_heads = x.shape[0], spec.num_heads
        nope, kv_lora = spec.qk_nope_head_dim, spec.kv_lora_rank
        if spec.q_lora_rank:
            q_a = rms_norm(self.linear(x, p + "q_a_proj.weight"), self.w[p + "q_a_layernorm.weight"],
                           spec.rms_norm_eps)
            q = self.linear(q_a, p + "q_b_proj.weight")
        else:
            q = self.linear(x, p + "q_proj.weight")
        q = q.reshape(num_tokens, num_heads, nope + spec.qk_rope_head_dim)
        q_nope = q[..., :nope]
        q_pe = rope.apply_rope_interleaved(q[..., nope:], positions, self.inv_freq, self.rope_magnitude)
        kv_a = self.linear(x, p + "kv_a_proj_with_mqa.weight")           # [T, kv_lora + rope]
        latent = rms_norm(kv_a[:, :kv_lora], self.w[p + "kv_a_layernorm.weight"], spec.rms_norm_eps)
        k_pe = rope.apply_rope_interleaved(kv_a[:, None, kv_lora:], positions, self.inv_freq,
                                           self.rope_magnitude)[:, 0]      # [T, rope], one head
        if cache.keys[layer] is not None:
            latent = np.concatenate([cache.keys[layer], latent], axis=0)
            k_pe = np.concatenate([cache.values[layer], k_pe], axis=0)
        cache.keys[layer], cache.values[layer] = latent, k_pe
        kv = self.linear(latent, p + "kv_b_proj.weight").reshape(latent.shape[0], num_heads, nope + spec.v_head_dim)
        k_nope, v = kv[..., :nope], kv[..., nope:]
        mask = np.arange(latent.shape[0])[None, :] > positions[:, None]   # [T, S] True = future
        scale = rope.mla_softmax_scale(spec)
        out = np.empty((num_tokens, num_heads, spec.v_head_dim))
        for head in range(num_heads):
            k = np.concatenate([k_nope[:, head, :], k_pe], axis=-1)       # [S, nope + rope]
            q_head = np.concatenate([q_nope[:, head, :], q_pe[:, head, :]], axis=-1)
            scores = np.where(mask, -np.inf, q_head @ k.T * scale)
            out[:, head, :] = softmax(scores) @ v[:, head, :]
        return self.linear(out.reshape(num_tokens, -1), p + "o_proj.weight")

    def swiglu(self, x, prefix):
        gate = self.linear(x, prefix + "gate_proj.weight")
        up = self.linear(x, prefix + "up_proj.weight")
        return self.linear(silu(gate) * up, prefix + "down_proj.weight")

    def route_sigmoid(self, logits, bias):
        """One token's GLM-4.5 / DeepSeek V3 routing -> (experts, weights), best first.
        Also records how close the group and expert choices came to ties, in router-logit
        units (a logit error d moves a sigmoid by <= d/4, a top-2 group sum by <= d/2)."""
        spec = self.spec
        scores = 1.0 / (1.0 + np.exp(-logits))
        choice = scores + bias
        num_experts, k = spec.num_experts, spec.num_experts_per_tok
        group_size = num_experts // spec.n_group
        allowed = np.ones(num_experts, dtype=bool)
        if spec.n_group > 1:
            grouped = choice.reshape(spec.n_group, group_size)
            group_scores = np.sort(grouped, axis=-1)[:, -2:].sum(axis=-1)
            group_order = np.argsort(-group_scores, kind="stable")
            kept = group_order[:spec.topk_group]
            if spec.topk_group < spec.n_group:
                margin = group_scores[group_order[spec.topk_group - 1]] - group_scores[group_order[spec.topk_group]]
                self.min_router_margin = min(self.min_router_margin, 2.0 * margin)
            allowed[:] = False
            for g in kept:
                allowed[g * group_size:(g + 1) * group_size] = True
        masked = np.where(allowed, choice, -np.inf)
        order = np.argsort(-masked, kind="stable")
        chosen = order[:k]
        if k < int(allowed.sum()):
            margin = masked[order[k - 1]] - masked[order[k]]
            self.min_router_margin = min(self.min_router_margin, 4.0 * margin)
        # transformers fills the dropped groups with 0.0, not -inf: the same experts win as
        # long as the winners' choice values are positive (checked, so the two agree here)
        hf_masked = np.where(allowed, choice, 0.0)
        assert set(np.argsort(-hf_masked, kind="stable")[:k]) == set(chosen), "masked_fill(0) would pick others"
        weights = scores[chosen]
        if spec.norm_topk_prob:
            weights = weights / (np.sum(weights) + 1e-20)
        return chosen, weights * spec.routed_scaling_factor

    def route_softmax(self, logits):
        """One token's softmax routing (Qwen3-MoE, DeepSeek V2's topk_method "greedy") ->
        (experts, weights), best first: p = softmax over all experts' logits, the top-k p (ties
        to the lower id), / their sum when norm_topk_prob, * routed_scaling_factor (1 but for
        DeepSeek V2). Records the k-th minus (k+1)-th router logit (p has the same order)."""
        spec = self.spec
        probs = softmax(logits)
        k = spec.num_experts_per_tok
        order = np.argsort(-logits, kind="stable")
        chosen = order[:k]
        if k < spec.num_experts:
            self.min_router_margin = min(self.min_router_margin, logits[order[k - 1]] - logits[order[k]])
        weights = probs[chosen]
        if spec.norm_topk_prob:
            weights = weights / np.sum(weights)
        return chosen, weights * spec.routed_scaling_factor

    def gpt_oss_moe(self, layer, x):
        spec, p = self.spec, f"model.layers.{layer}.mlp."
        logits = self.linear(x, p + "router.weight", p + "router.bias")   # [T, experts]
        k, limit = spec.num_experts_per_tok, spec.swiglu_limit
        gate_up, gate_up_bias = self.w[p + "experts.gate_up_proj"], self.w[p + "experts.gate_up_proj_bias"]
        down, down_bias = self.w[p + "experts.down_proj"], self.w[p + "experts.down_proj_bias"]
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            order = np.argsort(-logits[t], kind="stable")
            chosen = order[:k]
            if k < spec.num_experts:
                self.min_router_margin = min(self.min_router_margin, logits[t, order[k - 1]] - logits[t, order[k]])
            weights = softmax(logits[t, chosen])
            xt = x[t:t + 1]
            if self.round_activations is not None:
                xt = self.round_activations(xt)
            for expert, weight in zip(chosen, weights):
                gu = xt @ gate_up[expert] + gate_up_bias[expert]
                gate, up = np.minimum(gu[:, 0::2], limit), np.clip(gu[:, 1::2], -limit, limit)
                glu = (up + 1.0) * gate / (1.0 + np.exp(-1.702 * gate))
                if self.round_activations is not None:
                    glu = self.round_activations(glu)
                out[t] += weight * (glu @ down[expert] + down_bias[expert])[0]
        return out

    def moe(self, layer, x):
        spec, p = self.spec, f"model.layers.{layer}.mlp."
        if spec.is_gpt_oss:
            return self.gpt_oss_moe(layer, x)
        router_logits = self.linear(x, p + "gate.weight")        # [T, experts]
        bias = self.w.get(p + "gate.e_score_correction_bias", np.zeros(spec.num_experts))
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            if spec.sigmoid_router:
                chosen, weights = self.route_sigmoid(router_logits[t], bias)
            else:
                chosen, weights = self.route_softmax(router_logits[t])
            for expert, weight in zip(chosen, weights):
                out[t] += weight * self.swiglu(x[t:t + 1], f"{p}experts.{expert}.")[0]
        if spec.n_shared_experts:   # one SwiGLU of moe_intermediate_size * n_shared_experts
            out = out + self.swiglu(x, p + "shared_experts.")
        return out

    def forward(self, token_ids, cache, all_logits=False):
        """Runs token_ids at positions cache.num_tokens.. ; returns logits [T or 1, vocab]."""
        spec = self.spec
        token_ids = np.asarray(token_ids, dtype=np.int64)
        positions = np.arange(cache.num_tokens, cache.num_tokens + len(token_ids))
        h = self.w["model.embed_tokens.weight"][token_ids]      # [T, hidden]
        for layer in range(spec.num_layers):
            p = f"model.layers.{layer}."
            x = rms_norm(h, self.w[p + "input_layernorm.weight"], spec.rms_norm_eps)
            attention = self.mla_attention if spec.is_mla else self.attention
            h = h + attention(layer, x, positions, cache)
            x = rms_norm(h, self.w[p + "post_attention_layernorm.weight"], spec.rms_norm_eps)
            h = h + (self.moe(layer, x) if spec.is_moe_layer(layer) else self.swiglu(x, p + "mlp."))
        cache.num_tokens += len(token_ids)
        if not all_logits:
            h = h[-1:]
        h = rms_norm(h, self.w["model.norm.weight"], spec.rms_norm_eps)
        if self.round_activations is not None:
            h = self.round_activations(h)
        return h @ self.output_weight.T

    def greedy(self, prompt_ids, num_new_tokens):
        """-> (last prompt logits [vocab], new ids, per-step top1-top2 gaps,
        per-step smallest router margin (MoE; inf otherwise)).
        Incremental: one prefill, then one token per step through the KV cache.
        Step k's logits come from forward k (0 = the prompt), whose routing
        decisions are summarized by router_margins[k]."""
        cache = KVCache(self.spec.num_layers)
        self.min_router_margin = np.inf
        logits = self.forward(prompt_ids, cache)[0]
        prompt_logits = logits
        new_ids, gaps, router_margins = [], [], [self.min_router_margin]
        for step in range(num_new_tokens):
            best_id, gap = top1_and_gap(logits)
            new_ids.append(best_id)
            gaps.append(gap)
            if step + 1 < num_new_tokens:
                self.min_router_margin = np.inf
                logits = self.forward([best_id], cache)[0]
                router_margins.append(self.min_router_margin)
        self.min_router_margin = min(router_margins)
        return prompt_logits, new_ids, gaps, router_margins
