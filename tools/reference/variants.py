"""The file variants each tiny model is written in, and the exact weights a
reader gets back from each (so the reference runs on what the engine loads)."""
from dataclasses import dataclass

from . import numerics


@dataclass(frozen=True)
class Variant:
    key: str         # name in NAME.reference.json
    container: str   # "safetensors" or "gguf"
    dtype: str       # f32 / f16 / bf16 / q8_0 / q4_0

    def path(self, model_name):
        """Relative to the models directory."""
        if self.container == "safetensors":
            return model_name if self.dtype == "f32" else f"{model_name}-{self.dtype}"
        return f"{model_name}-{self.dtype}.gguf"


VARIANTS = [
    Variant("f32-safetensors", "safetensors", "f32"),
    Variant("bf16-safetensors", "safetensors", "bf16"),
    Variant("f32-gguf", "gguf", "f32"),
    Variant("f16-gguf", "gguf", "f16"),
    Variant("bf16-gguf", "gguf", "bf16"),
    Variant("q8_0-gguf", "gguf", "q8_0"),
    Variant("q4_0-gguf", "gguf", "q4_0"),
]


def stored_in_file_dtype(hf_name, array):
    """GGUF keeps 1-D tensors (norms, biases) and the MoE router in F32."""
    return array.ndim >= 2 and not hf_name.endswith("mlp.gate.weight")


def variant_weights(weights, variant):
    """HF-layout float32 weights -> the values a reader of `variant` gets back.
    Rounding and Q8_0/Q4_0 blocks run along the last (in) axis, which commutes
    with the GGUF row permutation and expert stacking."""
    out = {}
    for name, array in weights.items():
        if variant.container == "safetensors" or stored_in_file_dtype(name, array):
            out[name] = numerics.round_trip(array, variant.dtype)
        else:
            out[name] = array
    return out
