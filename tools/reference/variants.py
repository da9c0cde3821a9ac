"""The file variants each tiny model is written in, and the exact weights a
reader gets back from each (so the reference runs on what the engine loads)."""
from dataclasses import dataclass
import fnmatch

from . import gguf_layout, numerics


@dataclass(frozen=True)
class Variant:
    key: str         # name in NAME.reference.json; its first part names the tolerances (golden_tolerances.py)
    container: str   # "safetensors" or "gguf"
    dtype: str       # f32 / f16 / bf16 / q8_0 / q4_0 / any type of reference/quants.py
    # (GGUF tensor-name pattern, dtype) overrides, first match wins: a llama-quantize style mix
    mix: tuple = ()

    @property
    def label(self):
        return self.key.split("-")[0]

    def path(self, model_name):
        """Relative to the models directory."""
        if self.container == "safetensors":
            return model_name if self.dtype == "f32" else f"{model_name}-{self.dtype}"
        return f"{model_name}-{self.label}.gguf"

    def tensor_dtype(self, gguf_tensor_name):
        """The dtype of one matrix (1-D tensors and the router stay F32 regardless)."""
        for pattern, dtype in self.mix:
            if fnmatch.fnmatchcase(gguf_tensor_name, pattern):
                return dtype
        return self.dtype


VARIANTS = [
    Variant("f32-safetensors", "safetensors", "f32"),
    Variant("bf16-safetensors", "safetensors", "bf16"),
    Variant("f32-gguf", "gguf", "f32"),
    Variant("f16-gguf", "gguf", "f16"),
    Variant("bf16-gguf", "gguf", "bf16"),
    Variant("q8_0-gguf", "gguf", "q8_0"),
    Variant("q4_0-gguf", "gguf", "q4_0"),
]

# Models whose matmul in-dims are multiples of 256 (model_spec.SUPER_BLOCK_MODELS): the
# K-quants (Q2_K mixed with Q3_K, as llama-quantize does), IQ4_XS and MXFP4, and a mix shaped like llama-quantize's Q4_K_M (token
# embedding / output in Q6_K, attn_v and ffn_down one step up, some 32-value types mixed in).
SUPER_BLOCK_VARIANTS = [
    Variant("f32-gguf", "gguf", "f32"),
    # like llama-quantize's Q2_K: Q2_K with Q3_K where precision matters most
    Variant("q2_k-gguf", "gguf", "q2_k", mix=(("blk.*.attn_v.weight", "q3_k"), ("blk.*.ffn_down.weight", "q3_k"),
                                             ("blk.0.attn_output.weight", "q3_k"))),
    Variant("q4_k-gguf", "gguf", "q4_k"),
    Variant("q5_k-gguf", "gguf", "q5_k"),
    Variant("q6_k-gguf", "gguf", "q6_k"),
    Variant("iq4_xs-gguf", "gguf", "iq4_xs"),
    Variant("mxfp4-gguf", "gguf", "mxfp4"),
    Variant("q4_k_m-gguf", "gguf", "q4_k", mix=(
        ("token_embd.weight", "q6_k"), ("output.weight", "q6_k"),
        ("blk.*.attn_v.weight", "q6_k"), ("blk.0.ffn_down.weight", "q5_k"),
        ("blk.1.ffn_down.weight", "q5_0"), ("blk.*.attn_k.weight", "q4_1"),
        ("blk.1.ffn_up.weight", "q5_1"), ("blk.1.attn_output.weight", "iq4_nl"),
        ("blk.0.attn_output.weight", "q8_0"))),
]


def variants_for(spec):
    return SUPER_BLOCK_VARIANTS if spec.super_blocks else VARIANTS


def stored_in_file_dtype(hf_name, array):
    """GGUF keeps 1-D tensors (norms, biases, sinks), the experts' stacked biases and the MoE router in F32."""
    return (array.ndim >= 2 and not hf_name.endswith(("mlp.gate.weight", "mlp.router.weight"))
            and not hf_name.endswith("_bias"))


def variant_weights(weights, variant, spec):
    """HF-layout float32 weights -> the values a reader of `variant` gets back.
    Rounding and quantization blocks run along the last (in) axis, which commutes
    with the GGUF row permutation and expert stacking, but not with the transposed
    key half of DeepSeek's kv_b_proj (attn_k_b): that one is rounded as the file holds it
    (an older-layout file's attn_kv_b is kv_b_proj itself, rounded as any matrix)."""
    out = {}
    for name, array in weights.items():
        if variant.container == "safetensors":
            out[name] = numerics.round_trip(array, variant.dtype)
        elif name.endswith("self_attn.kv_b_proj.weight") and not spec.gguf_kv_b:
            block = "blk." + name.split(".")[2]
            k_b, v_b = gguf_layout.split_kv_b(array, spec)
            out[name] = gguf_layout.join_kv_b(
                numerics.round_trip(k_b, variant.tensor_dtype(f"{block}.attn_k_b.weight")),
                numerics.round_trip(v_b, variant.tensor_dtype(f"{block}.attn_v_b.weight")))
        elif gguf_layout.is_fused_expert(name) and stored_in_file_dtype(name, array):
            # gpt-oss's fused experts: rounded per expert matrix as the file holds them ({out, in})
            out[name] = gguf_layout.join_fused_expert(name, [
                numerics.round_trip(part, variant.tensor_dtype(target))
                for target, part in gguf_layout.split_fused_experts(name, array)])
        elif stored_in_file_dtype(name, array):
            out[name] = numerics.round_trip(array, variant.tensor_dtype(gguf_layout.gguf_tensor_name(name)))
        else:
            out[name] = array
    return out
