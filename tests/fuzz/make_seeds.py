#!/usr/bin/env python3
"""Writes a small seed corpus for the fuzz targets: valid tiny GGUF models
(dense, MoE, quantized, llama with rope_freqs, qwen2 with biases), safetensors
files and HF JSON configs (written from the format specs); request bodies of
each protocol shaped like what Claude Code, Codex and the SDKs send
(/work/shared/design/AGENT-CLIENTS.md); the chat templates of
tests/golden/templates with a context from their goldens; JSON schemas;
tokenizer and output-parser texts. No dependencies.

usage: make_seeds.py OUT_DIR   (creates OUT_DIR/{gguf,safetensors,json,api,jinja,schema,tokenizer,output})
"""
import glob
import json
import os
import struct
import sys

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_BF16 = 0, 1, 2, 8, 30
GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_IQ4_NL, GGML_MXFP4 = 3, 6, 7, 20, 39
GGML_Q2_K, GGML_Q3_K, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K, GGML_Q8_K, GGML_IQ4_XS = 10, 11, 12, 13, 14, 15, 23
# The other block types (ggml's layouts): values per block, bytes per block, offsets of the
# f16 scales (Q8_K: one f32 scale at 0; MXFP4: one e8m0 exponent byte at 0).
BLOCKS = {
    GGML_Q4_1: (32, 20, [0, 2]), GGML_Q5_0: (32, 22, [0]), GGML_Q5_1: (32, 24, [0, 2]),
    GGML_IQ4_NL: (32, 18, [0]), GGML_MXFP4: (32, 17, []), GGML_Q2_K: (256, 84, [80, 82]),
    GGML_Q3_K: (256, 110, [108]), GGML_Q4_K: (256, 144, [0, 2]), GGML_Q5_K: (256, 176, [0, 2]),
    GGML_Q6_K: (256, 210, [208]), GGML_Q8_K: (256, 292, []), GGML_IQ4_XS: (256, 136, [0]),
}


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(vtype, value):
    scalar = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q", I64: "q", F64: "d"}
    if vtype in scalar:
        return struct.pack("<" + scalar[vtype], value)
    if vtype == STRING:
        return gguf_string(value)
    elem_type, items = value
    out = struct.pack("<IQ", elem_type, len(items))
    for item in items:
        out += gguf_value(elem_type, item)
    return out


def tensor_bytes(shape, ggml_type):
    n = 1
    for d in shape:
        n *= d
    if ggml_type == GGML_F32:
        return struct.pack("<%df" % n, *[(i % 17) / 16.0 for i in range(n)])
    if ggml_type in (GGML_F16, GGML_BF16):
        return b"\x00\x3c" * n
    if ggml_type == GGML_Q8_0:
        return (b"\x00\x3c" + bytes(range(32))) * (n // 32)
    if ggml_type == GGML_Q4_0:
        return (b"\x00\x3c" + bytes(range(16))) * (n // 32)
    if ggml_type in BLOCKS:
        size, nbytes, scales = BLOCKS[ggml_type]
        block = bytearray(i % 251 for i in range(nbytes))
        for offset in scales:
            block[offset:offset + 2] = b"\x00\x3c"   # f16 1.0: finite
        if ggml_type == GGML_Q8_K:
            block[0:4] = struct.pack("<f", 0.01)
        if ggml_type == GGML_MXFP4:
            block[0] = 120
        return bytes(block) * (n // size)
    raise ValueError(ggml_type)


def gguf_file(kvs, tensors, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, shape outermost-first, ggml_type)]."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs) + 1)
    out += gguf_string("general.alignment") + struct.pack("<II", U32, alignment)
    for key, vtype, value in kvs:
        out += gguf_string(key) + struct.pack("<I", vtype) + gguf_value(vtype, value)
    data = b""
    for name, shape, ggml_type in tensors:
        data += b"\x00" * (-len(data) % alignment)
        out += gguf_string(name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in reversed(shape))
        out += struct.pack("<IQ", ggml_type, len(data))
        data += tensor_bytes(shape, ggml_type)
    out += b"\x00" * (-len(out) % alignment)
    return out + data


def tiny_model(arch, matrix_type=GGML_F32, experts=0, tied=False, types_cycle=None):
    """types_cycle: matrix types taken in turn (a llama-quantize style mix) instead of matrix_type."""
    hidden, heads, kv_heads, head_dim, ffn, vocab, layers = 32, 2, 1, 16, 32, 12, 1
    a = arch + "."
    tokens = ["a", "b", "c", "d", "ab", "cd", "abcd", "<s>", "</s>", "<eot>", "<tool>", "[PAD11]"]
    types = [1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 4, 5]
    kvs = [
        ("general.architecture", STRING, arch), ("general.name", STRING, "seed-" + arch),
        (a + "context_length", U32, 256), (a + "embedding_length", U32, hidden), (a + "block_count", U32, layers),
        (a + "feed_forward_length", U32, ffn), (a + "attention.head_count", U32, heads),
        (a + "attention.head_count_kv", U32, kv_heads), (a + "attention.key_length", U32, head_dim),
        (a + "attention.layer_norm_rms_epsilon", F32, 1e-6), (a + "rope.freq_base", F32, 10000.0),
        ("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "llama-bpe" if arch == "llama" else "qwen2"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)), ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b", "c d", "ab cd"])),
        ("tokenizer.ggml.bos_token_id", U32, 7), ("tokenizer.ggml.eos_token_id", U32, 8),
        ("tokenizer.ggml.eot_token_id", U32, 9), ("tokenizer.ggml.add_bos_token", BOOL, arch == "llama"),
        ("tokenizer.chat_template", STRING, "{% for m in messages %}{{ m.content }}{% endfor %}"),
        ("general.sampling.temp", F32, 0.7), ("general.sampling.top_k", I32, 20),
    ]
    if experts:
        kvs += [(a + "expert_count", U32, experts), (a + "expert_used_count", U32, 1),
                (a + "expert_feed_forward_length", U32, 32)]
    q, kv = heads * head_dim, kv_heads * head_dim
    m = matrix_type
    tensors = [("token_embd.weight", [vocab, hidden], m), ("output_norm.weight", [hidden], GGML_F32)]
    if not tied:
        tensors.append(("output.weight", [vocab, hidden], m))
    if arch == "llama":
        tensors.append(("rope_freqs.weight", [head_dim // 2], GGML_F32))
    for layer in range(layers):
        b = "blk.%d." % layer
        tensors += [(b + "attn_norm.weight", [hidden], GGML_F32), (b + "attn_q.weight", [q, hidden], m),
                    (b + "attn_k.weight", [kv, hidden], m), (b + "attn_v.weight", [kv, hidden], m),
                    (b + "attn_output.weight", [hidden, q], m), (b + "ffn_norm.weight", [hidden], GGML_F32)]
        if arch == "qwen2":
            tensors += [(b + "attn_q.bias", [q], GGML_F32), (b + "attn_k.bias", [kv], GGML_F32),
                        (b + "attn_v.bias", [kv], GGML_F32)]
        if arch in ("qwen3", "qwen3moe"):
            tensors += [(b + "attn_q_norm.weight", [head_dim], GGML_F32), (b + "attn_k_norm.weight", [head_dim], GGML_F32)]
        if experts:
            tensors += [(b + "ffn_gate_inp.weight", [experts, hidden], GGML_F32),
                        (b + "ffn_gate_exps.weight", [experts, 32, hidden], m),
                        (b + "ffn_up_exps.weight", [experts, 32, hidden], m),
                        (b + "ffn_down_exps.weight", [experts, hidden, 32], m)]
        else:
            tensors += [(b + "ffn_gate.weight", [ffn, hidden], m), (b + "ffn_up.weight", [ffn, hidden], m),
                        (b + "ffn_down.weight", [hidden, ffn], m)]
    if types_cycle:
        matrices = [i for i, t in enumerate(tensors) if len(t[1]) >= 2 and "gate_inp" not in t[0]]
        for k, i in enumerate(matrices):
            tensors[i] = (tensors[i][0], tensors[i][1], types_cycle[k % len(types_cycle)])
    return gguf_file(kvs, tensors)


def super_block_tensors(bad_scale=False):
    """One small tensor per 256-value type (no model: those need in-dims of 256), and
    with bad_scale a NaN f16 scale in the last block of the Q6_K one."""
    types = [GGML_Q2_K, GGML_Q3_K, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K, GGML_Q8_K, GGML_IQ4_XS]
    data = gguf_file([("general.architecture", STRING, "qwen3")],
                     [("t%d" % t, [2, 256], t) for t in types])
    if bad_scale:
        data = bytearray(data)
        index = data.rfind(bytes(i % 251 for i in range(210))[:208] + b"\x00\x3c")
        data[index + 208:index + 210] = b"\x00\x7e"
        data = bytes(data)
    return data


def metadata_only():
    kvs = [("u8", U8, 1), ("i8", I8, -1), ("u16", U16, 2), ("i16", I16, -2), ("u32", U32, 3), ("i32", I32, -3),
           ("f32", F32, 0.5), ("bool", BOOL, True), ("str", STRING, "x"), ("u64", U64, 4), ("i64", I64, -4),
           ("f64", F64, 0.25), ("ints", ARRAY, (I32, [1, 2, 3])), ("floats", ARRAY, (F32, [0.5, 1.5])),
           ("nested", ARRAY, (ARRAY, [(U8, [1, 2]), (STRING, ["a"])]))]
    return gguf_file(kvs, [("t", [2, 32], GGML_Q4_0), ("u", [3], GGML_BF16)])


def safetensors_file(entries):
    header, data = {}, b""
    for name, dtype, shape in entries:
        n = 1
        for d in shape:
            n *= d
        size = n * {"F32": 4, "F16": 2, "BF16": 2}[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + size]}
        data += bytes(i % 251 for i in range(size))
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def hf_config(arch_class, **extra):
    config = {"architectures": [arch_class], "vocab_size": 12, "hidden_size": 32, "intermediate_size": 32,
              "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
              "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
              "tie_word_embeddings": False, "eos_token_id": [8, 9]}
    config.update(extra)
    return config


TOOL_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
    "properties": {
        "command": {"type": "string", "description": "The command to run"},
        "timeout": {"type": "number", "maximum": 600000},
        "mode": {"type": "string", "enum": ["read", "write"]},
        "paths": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
        "edit": {"anyOf": [{"type": "object", "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                            "required": ["old", "new"]}, {"type": "null"}]},
        "kind": {"const": "bash"}, "count": {"type": "integer", "exclusiveMinimum": 0},
        "name": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$", "format": "hostname"},
    },
    "required": ["command"],
}

RECURSIVE_SCHEMA = {
    "$defs": {"node": {"type": "object", "properties": {"value": {"type": ["integer", "null"]},
                                                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                       "required": ["value"]}},
    "allOf": [{"$ref": "#/$defs/node"}], "title": "tree",
}


def api_seeds():
    """(name, selector byte + body) pairs for fuzz_api_request (see its header)."""
    claude_code = {
        "model": "local-model", "max_tokens": 32000, "stream": True,
        "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.3; cc_entrypoint=cli;"},
                   {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
                   {"type": "text", "text": "Main prompt.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                                         {"type": "text", "text": "say hi"}]},
            {"role": "system", "content": "Extra system text"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Run it.", "signature": "sig"},
                {"type": "text", "text": "Running."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt",
                                          "is_error": False, "cache_control": {"type": "ephemeral"}}]}],
        "tools": [{"name": "Bash", "description": "Run a command", "input_schema": TOOL_SCHEMA}],
        "metadata": {"user_id": "{\"device\":\"x\"}"}, "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"}, "context_management": {"edits": []},
    }
    title = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Name this chat"}],
             "output_config": {"format": {"type": "json_schema",
                                          "schema": {"type": "object", "properties": {"title": {"type": "string"}},
                                                     "required": ["title"], "additionalProperties": False}}},
             "tool_choice": {"type": "auto"}, "thinking": {"type": "enabled", "budget_tokens": 1024},
             "stop_sequences": ["\n\nHuman:"], "temperature": 0.5, "top_k": 40}
    forced = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "weather?"},
                                                          {"role": "assistant", "content": "Let me"}],
              "tools": claude_code["tools"], "tool_choice": {"type": "tool", "name": "Bash"}}
    count = {"model": "m", "messages": claude_code["messages"], "tools": claude_code["tools"],
             "system": "plain system"}
    chat = {"model": "m", "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18C"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                        "parameters": TOOL_SCHEMA}}],
            "tool_choice": "required", "temperature": 0.7, "top_p": 0.9, "max_tokens": 64, "seed": 7,
            "stop": ["END"], "stream": True, "stream_options": {"include_usage": True}, "logprobs": True,
            "top_logprobs": 3, "reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": True},
            "loop_guard": {"tokens": 64, "max_period": 8}}
    chat_schema = {"model": "m", "messages": [{"role": "user", "content": "json please"}],
                   "response_format": {"type": "json_schema", "json_schema": {"name": "tree", "schema": RECURSIVE_SCHEMA}},
                   "max_completion_tokens": 100, "min_p": 0.05, "repetition_penalty": 1.1, "n": 1,
                   "presence_penalty": 0.5, "frequency_penalty": 0.1, "top_k": 20, "min_tokens": 2}
    completion = {"model": "m", "prompt": [[1, 2, 3]], "max_tokens": 4, "echo": True, "logprobs": 2}
    codex = {"model": "m", "stream": True, "store": False, "parallel_tool_calls": True, "tool_choice": "auto",
             "include": ["reasoning.encrypted_content"], "prompt_cache_key": "abc", "client_metadata": {"x": "y"},
             "reasoning": {"summary": "auto", "effort": "medium"},
             "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
                       {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
                       {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}],
                        "content": None, "encrypted_content": "enc"},
                       {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
                        "arguments": "{\"cmd\":\"ls\"}", "status": "completed"},
                       {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}],
             "tools": [{"type": "function", "name": "exec_command", "description": "run", "strict": False,
                        "parameters": TOOL_SCHEMA},
                       {"type": "namespace", "tools": []}, {"type": "web_search"}]}
    responses_schema = {"model": "m", "input": "hi", "previous_response_id": "resp_seed", "instructions": "sys",
                        "text": {"format": {"type": "json_schema", "name": "t", "schema": RECURSIVE_SCHEMA}},
                        "max_output_tokens": 64, "temperature": 1.0, "metadata": {"k": "v"},
                        "tool_choice": {"type": "function", "name": "exec_command"}, "tools": codex["tools"]}
    return [("chat_tools", "o", chat), ("chat_schema", "o", chat_schema), ("completion", "o", completion),
            ("claude_code", "a", claude_code), ("title", "a", title), ("forced_tool", "a", forced),
            ("count_tokens", "c", count), ("codex", "r", codex), ("responses_schema", "r", responses_schema)]


def jinja_seeds():
    """(name, template NUL context) for fuzz_jinja: the golden templates, each with its first golden context."""
    seeds = []
    for path in sorted(glob.glob(os.path.join(SOURCE_DIR, "tests/golden/templates/*.jinja"))):
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path, "rb") as f:
            source = f.read()
        contexts = []
        goldens = os.path.splitext(path)[0] + ".jsonl"
        if os.path.exists(goldens):
            with open(goldens) as f:
                for line in f:
                    if line.strip():
                        contexts.append(json.loads(line).get("context", {}))
        # The first golden case, and the richest one (tools and tool calls), for each template.
        picks = contexts[:1] + sorted(contexts, key=lambda c: len(json.dumps(c)))[-1:]
        for i, context in enumerate(picks or [{}]):
            seeds.append(("%s_%d" % (name, i), source + b"\0" + json.dumps(context).encode()))
    small = [
        b"{% for m in messages %}{{ loop.index }}:{{ m.role | upper }} {{ m.content | tojson }}{% endfor %}",
        b"{% macro f(x, y=2) %}{{ x ~ y }}{% endmacro %}{% set ns = namespace(a=[]) %}"
        b"{% for i in range(3) if i > 0 %}{% set ns.a = ns.a + [f(i)] %}{% endfor %}{{ ns.a | join(',') }}",
        b"{% set x = {'a': [1, 2.5, none, true]} %}{{ x | tojson(indent=2) }}{{ x.a[1:] }}{{ '%s-%d' % ('a', 3) }}"
        b"{{ 'a,b'.split(',') | length }}{{ 'Ab'.lower().startswith('a') }}{% filter upper %}x{% endfilter %}",
        b"{% macro m() %}[{{ caller(1) }}]{% endmacro %}{% call(v) m() %}v={{ v }}{% endcall %}"
        b"{%- if messages[0]['role'] == 'system' -%}{{ raise_exception('no system') }}{%- endif -%}",
    ]
    for i, source in enumerate(small):
        seeds.append(("small_%d" % i, source))
    return seeds


def schema_seeds():
    return [("tool", TOOL_SCHEMA), ("recursive", RECURSIVE_SCHEMA), ("true", True),
            ("object", {"type": "object"}),
            ("types", {"type": ["string", "number", "boolean", "null"], "nullable": True}),
            ("enum", {"enum": ["a", 1, None, {"k": [1]}], "minimum": 1}),
            ("array", {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 5,
                       "uniqueItems": True}),
            ("extra", {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}),
            ("oneof", {"oneOf": [{"type": "string", "minLength": 2}, {"$ref": "#/definitions/n"}],
                       "definitions": {"n": {"type": "number"}}})]


def text_seeds():
    return [b"Hello, world! The thing and the other thing.", "caf\u00e9 \u4f60\u597d e\u0301 \U0001F600".encode(),
            b"<|im_start|>user\nhi<|im_end|>\n<think>\nhmm\n</think>\n\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
            b"  \n\n\t x = {\"a\": 1}; \xff\xfe\xc3 \xe4\xbd", b"<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"]


def output_seeds():
    hermes = 1 << 2 | 1
    deepseek = 2 << 2 | 1
    llama = 3 << 2
    calls = ("<think>\nplan\n</think>\n\nText <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
             "</tool_call>\n<tool_call>{\"name\": \"f\", \"arguments\": \"{}\"}</tool_call> tail <tool_ca")
    ds = ("<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>function<\uff5ctool\u2581sep\uff5c>"
          "get_weather\n```json\n{\"city\": \"Paris\"}\n```<\uff5ctool\u2581call\u2581end\uff5c>"
          "<\uff5ctool\u2581call\u2581begin\uff5c>f<\uff5ctool\u2581sep\uff5c>{\"a\": 1}<\uff5ctool\u2581call\u2581end\uff5c>"
          "<\uff5ctool\u2581calls\u2581end\uff5c>")
    llama_calls = "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"x\": 1}}; {\"name\": \"g\", \"arguments\": {}}"
    return [("hermes", bytes([hermes, 7]) + calls.encode()), ("in_reasoning", bytes([hermes | 2, 3]) + calls.encode()),
            ("deepseek", bytes([deepseek, 11]) + ("<think>x</think>" + ds).encode()),
            ("llama", bytes([llama, 5]) + llama_calls.encode()), ("plain", bytes([0, 1]) + b"no tags <thin at all")]


def write_protocol_seeds(out, write):
    for sub in ("api", "jinja", "schema", "tokenizer", "output"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for name, selector, body in api_seeds():
        write("api/%s" % name, selector.encode() + json.dumps(body).encode())
    for name, data in jinja_seeds():
        write("jinja/%s" % name, data)
    for name, schema in schema_seeds():
        write("schema/%s.json" % name, json.dumps(schema).encode())
    for i, text in enumerate(text_seeds()):
        for selector in range(8):
            write("tokenizer/text%d_%d" % (i, selector), bytes([selector]) + text)
    for name, data in output_seeds():
        write("output/%s" % name, data)


def main():
    out = sys.argv[1]
    for sub in ("gguf", "safetensors", "json"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)

    def write(rel, data):
        with open(os.path.join(out, rel), "wb") as f:
            f.write(data if isinstance(data, bytes) else json.dumps(data).encode())

    write("gguf/qwen3_f32.gguf", tiny_model("qwen3"))
    write("gguf/qwen3moe_q8_0.gguf", tiny_model("qwen3moe", GGML_Q8_0, experts=2))
    write("gguf/llama_q4_0.gguf", tiny_model("llama", GGML_Q4_0))
    write("gguf/qwen2_f16_tied.gguf", tiny_model("qwen2", GGML_F16, tied=True))
    write("gguf/metadata_only.gguf", metadata_only())
    write("gguf/qwen3_mix_32.gguf", tiny_model("qwen3", types_cycle=[
        GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_IQ4_NL, GGML_MXFP4, GGML_Q8_0, GGML_Q4_0]))
    write("gguf/qwen3moe_mxfp4.gguf", tiny_model("qwen3moe", GGML_MXFP4, experts=2))
    write("gguf/super_blocks.gguf", super_block_tensors())
    write("gguf/super_blocks_nan_scale.gguf", super_block_tensors(bad_scale=True))
    write("safetensors/dense.safetensors", safetensors_file([
        ("model.embed_tokens.weight", "F32", [12, 32]), ("model.layers.0.self_attn.q_proj.weight", "BF16", [32, 32]),
        ("model.layers.0.self_attn.q_proj.bias", "F16", [32]), ("model.norm.weight", "F32", [32])]))
    write("safetensors/experts.safetensors", safetensors_file([
        ("model.layers.0.mlp.gate.weight", "F32", [2, 32]),
        ("model.layers.0.mlp.experts.1.down_proj.weight", "BF16", [32, 8]), ("scalar", "F32", []),
        ("empty", "F16", [0, 4])]))
    write("json/qwen3.json", hf_config("Qwen3ForCausalLM"))
    write("json/qwen2.json", hf_config("Qwen2ForCausalLM", head_dim=None))
    write("json/llama3.json", hf_config("LlamaForCausalLM", rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64}))
    write("json/qwen3moe.json", hf_config("Qwen3MoeForCausalLM", num_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=16, norm_topk_prob=True, decoder_sparse_step=1,
                                          mlp_only_layers=[]))
    write("json/model_type.json", {"model_type": "qwen3_moe", "vocab_size": 1})
    write("json/tokenizer_config.json", {"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": True,
                                         "chat_template": [{"name": "default", "template": "x"},
                                                           {"name": "tool_use", "template": "y"}]})
    write("json/generation_config.json", {"eos_token_id": [8, 9], "temperature": 0.6, "top_p": 0.95, "top_k": 20,
                                          "min_p": 0.0, "repetition_penalty": 1.05})
    write("json/tensor_name.txt", b"model.layers.3.mlp.experts.17.up_proj.weight")
    write_protocol_seeds(out, write)


if __name__ == "__main__":
    main()
