"""Tolerances for comparing llmesh against the reference, per weight dtype.

LOGIT_TOLERANCE: max |ours - ref| / max |ref| over the vocab at the last prompt
position. The reference runs on the variant's exact (rounded / dequantized)
weights, so what is left is the engine's own arithmetic. Budgets are ~2x the
worst case measured by tools/check_reference.py, which re-runs the reference
with every matmul input rounded the way an engine may round activations
(worst over the 4 tiny models x 3 prompts; check_reference fails if a
tolerance drops below 1.5x its measurement):
  f32   float32 accumulation over dims <= 128: ~1e-7 relative; 1e-4 leaves room
        for any summation order / fused ops, and still catches e.g. a wrong eps.
  f16   f16 activations: up to 2.1e-3 measured; 1e-2.
  bf16  bf16 activations: up to 1.4e-2 measured; 3e-2.
  q8_0, q4_0  activations quantized to Q8_0 blocks for integer dot products
        (as llama.cpp does): up to 3.3e-2 measured on the 2-layer models, 4.5e-2 on the
        3-layer tiny-glm4moe and tiny-deepseek3 (only ~10% of tiny-deepseek3's seeds stay
        within 7e-2 / 1.5: search_seeds.py --budget picked one; ~15% of tiny-deepseek2-lite's,
        whose pick measures 4.6e-2); 7e-2. The weights' own
        quantization error is not in this budget (the reference uses the same
        dequantized weights); layout or kernel bugs give O(1) errors.

Super-block variants (tiny-qwen3-k: q2_k (with q3_k tensors), q4_k, q5_k, q6_k,
iq4_xs, mxfp4 and the q4_k_m mix): today every CPU kernel family runs them through the reference
matmul (dequantized f32 weights, double accumulation), so they match to ~1e-6.
Their budget is nevertheless that of the integer-dot types, 7e-2, because fast
kernels will quantize activations to Q8_K (256-value blocks, one f32 scale) as
llama.cpp does: check_reference.py measures the Q8_K activation rounding on
tiny-qwen3-k (2.7e-2 when written) and fails if 7e-2 drops below 1.5x
it. The weights' own quantization error is again not in the budget (the reference
runs on the dequantized weights); a misread block layout moves logits by O(1).

NEAR_TIE: a greedy step (or a top-1) whose reference top-1/top-2 gap is below
NEAR_TIE[dtype] * max |ref logits| may legitimately flip under those roundings
(~4 standard deviations of the error of a logit difference, taking a single
logit's std as the measured max over the vocab / 4.5), so a divergence exactly
there is reported as a tie, not a failure.

ROUTER_NEAR_TIE (MoE): a forward whose reference top-k expert choice had a
margin (k-th minus (k+1)-th router logit) below this may route differently in
the engine; from then on its logits and greedy tokens are reported, not
failed. Absolute router-logit units for the tiny models (router logits have
std ~4): the measured worst change of a router logit is ~0.005 with f16, ~0.05
with bf16 and ~0.11 with Q8_0 activations; a margin moves by up to twice that.
(Seen for real: tiny-qwen3moe q8_0 p0 routes one token differently at margin
0.059, moving the logits by 1.6e-1, reproduced by the simulated reference.)

kv-f16, kv-bf16, kv-q8_0: the f32 weights with the KV cache in that dtype (every
other variant runs with an f32 KV cache). Measured against llmesh with an f32 KV
cache over the 4 tiny models x 3 prompts: f16 9.4e-4 max (4.7e-4 median), bf16
7.4e-3 (4.4e-3), q8_0 4.2e-2 (1.1e-2; head_dim 32 models only). Budgets ~3x
those; near-tie and router budgets as for the activation roundings of similar
size (f16 like f16, bf16 like bf16, q8_0 like Q8_0 activations).

F32 variants must match all greedy tokens (their seeds were chosen so that no
f32 greedy step is a near-tie); other dtypes the first MIN_GREEDY_MATCH_OTHER
tokens (or up to a near-tie). GGUF-f32 and safetensors-f32 hold identical
weights: logits within 1e-5 relative.
"""

LOGIT_TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 3e-2, "q8_0": 7e-2, "q4_0": 7e-2,
                   "kv-f16": 3e-3, "kv-bf16": 2e-2, "kv-q8_0": 1.2e-1}
NEAR_TIE = {"f32": 2.5e-4, "f16": 5e-3, "bf16": 1.5e-2, "q8_0": 4e-2, "q4_0": 4e-2,
            "kv-f16": 5e-3, "kv-bf16": 1.5e-2, "kv-q8_0": 4e-2}
ROUTER_NEAR_TIE = {"f32": 1e-3, "f16": 2e-2, "bf16": 0.2, "q8_0": 0.3, "q4_0": 0.3,
                   "kv-f16": 2e-2, "kv-bf16": 0.2, "kv-q8_0": 0.3}
KV_DTYPES = ["f16", "bf16", "q8_0"]           # the non-f32 --kv-cache-dtype values
KV_DTYPE_BLOCK = {"f16": 1, "bf16": 1, "q8_0": 32}  # head_dim must be a multiple of this
SUPER_BLOCK_LABELS = ("q2_k", "q4_k", "q5_k", "q6_k", "iq4_xs", "mxfp4", "q4_k_m")
for _label in SUPER_BLOCK_LABELS:   # budgets of the integer-dot types (see above)
    LOGIT_TOLERANCE[_label], NEAR_TIE[_label], ROUTER_NEAR_TIE[_label] = 7e-2, 4e-2, 0.3
MIN_GREEDY_MATCH_OTHER = 8
SAME_WEIGHTS_TOLERANCE = 1e-5
