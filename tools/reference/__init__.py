"""Independent numpy reference for llmesh's golden model tests.

Written from the architectures' published definitions (HF config semantics,
the GGUF v3 spec, ggml's Q8_0/Q4_0 block formats), not from llmesh's C++.
"""
