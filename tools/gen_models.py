#!/usr/bin/env python3
"""Generates llmesh's deterministic tiny test models and their reference logits.

  /usr/bin/python3 tools/gen_models.py --out DIR [--only NAME[,NAME]] [--no-reference]
  /usr/bin/python3 tools/gen_models.py --out DIR --preset qwen3-0.6b

Per tiny model NAME, in DIR:
  NAME/            HF checkpoint, F32 safetensors (sharded for tiny-qwen3moe), config,
                   generation config, tokenizer files
  NAME-bf16/       the same in BF16
  NAME-{f32,f16,bf16,q8_0,q4_0}.gguf
  NAME.reference.json + NAME.ref/*.f32   reference logits and greedy continuations
Super-block models (model_spec.SUPER_BLOCK_MODELS, in-dims multiples of 256) get only
GGUF variants: NAME-{f32,q2_k,q4_k,q5_k,q6_k,iq4_xs,mxfp4,q4_k_m}.gguf (q2_k and q4_k_m
are per-tensor mixes, reference/variants.py).
A preset writes only DIR/PRESET-{bf16,q8_0,q4_0}.gguf (or --dtypes), streaming tensor by tensor.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_reader  # noqa: E402
import gguf_writer  # noqa: E402
from reference import forward, gguf_layout, model_spec, prompts, safetensors_io, variants, weights  # noqa: E402

NUM_GREEDY_TOKENS = 32   # per prompt; a spec may ask for fewer (ModelSpec.num_greedy_tokens)


def generator_version():
    """Hash of the generator's sources: check_golden regenerates when it changes."""
    tools_dir = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(tools_dir, f) for f in ("gen_models.py", "gguf_writer.py", "gguf_reader.py")]
    reference_dir = os.path.join(tools_dir, "reference")
    files += sorted(os.path.join(reference_dir, f) for f in os.listdir(reference_dir) if f.endswith(".py"))
    templates_dir = os.path.join(tools_dir, "templates")   # the models' own chat templates
    if os.path.isdir(templates_dir):
        files += sorted(os.path.join(templates_dir, f) for f in os.listdir(templates_dir))
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def write_hf_dir(directory, spec, hf_weights, dtype_name, tokenizer_dir):
    os.makedirs(directory, exist_ok=True)
    torch_dtype = {"F32": "float32", "BF16": "bfloat16"}[dtype_name]
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(spec.config_json(torch_dtype), f, indent=2)
    with open(os.path.join(directory, "generation_config.json"), "w") as f:
        json.dump(spec.generation_config_json(), f, indent=2)
    for file_name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(tokenizer_dir, file_name), os.path.join(directory, file_name))
    if spec.chat_template:
        shutil.copyfile(os.path.join(model_spec.REPO_ROOT, spec.chat_template),
                        os.path.join(directory, "chat_template.jinja"))
    tensors = [(info.name, hf_weights[info.name]) for info in weights.tensor_infos(spec)]
    safetensors_io.write_checkpoint(directory, tensors, dtype_name, spec.num_shards)


def tokenizer_metadata(spec, tokenizer_json, tokenizer_config):
    """Encoded once per model, copied into each of its GGUF files."""
    metadata = gguf_writer.GGUFMetadata()
    gguf_layout.add_tokenizer_metadata(metadata, spec, tokenizer_json, tokenizer_config)
    return metadata


def open_gguf(path, spec, variant, plan, tokenizer_kv):
    """Declares metadata and tensors and writes the header; the caller streams the data."""
    writer = gguf_writer.GGUFWriter(path)
    gguf_layout.add_model_metadata(writer, spec, variant.dtype, gguf_writer.FILE_TYPE_BY_NAME[variant.dtype])
    writer.extend(tokenizer_kv)
    for tensor in plan:
        dtype_name = variant.tensor_dtype(tensor.name) if tensor.takes_file_dtype else "f32"
        writer.add_tensor_info(tensor.name, tensor.shape, gguf_writer.GGML_TYPE_BY_NAME[dtype_name])
    writer.write_header()
    return writer


def write_ggufs(paths_by_variant, spec, plan, tokenizer_kv, show_progress=False):
    """Writes one GGUF per variant, producing each tensor's rows once for all of them."""
    writers = [open_gguf(path, spec, variant, plan, tokenizer_kv) for variant, path in paths_by_variant.items()]
    started = time.time()
    for index, tensor in enumerate(plan):
        for writer in writers:
            writer.begin_tensor(tensor.name)
        for chunk in tensor.produce_chunks():
            for writer in writers:
                writer.write_rows(chunk)
        for writer in writers:
            writer.end_tensor()
        if show_progress:
            print(f"\r  tensor {index + 1}/{len(plan)} {tensor.name:<28} ({time.time() - started:.0f} s)",
                  end="", flush=True)
    for writer in writers:
        writer.close()
    if show_progress:
        print()


def reference_for_variant(spec, variant_weights, prompt_list, ref_dir, model_name, variant_key):
    model = forward.Transformer(spec, variant_weights)
    entries = []
    for index, prompt_ids in enumerate(prompt_list):
        last_logits, greedy_ids, gaps, router_margins = model.greedy(prompt_ids, spec.num_greedy_tokens or NUM_GREEDY_TOKENS)
        logits_file = f"{model_name}.ref/{variant_key}.p{index}.f32"
        last_logits.astype("<f4").tofile(os.path.join(ref_dir, os.path.basename(logits_file)))
        entries.append({"ids": list(prompt_ids), "last_logits_file": logits_file,
                        "greedy_ids": greedy_ids, "greedy_gaps": [round(g, 6) for g in gaps],
                        "min_gap": round(min(gaps), 6),
                        "logits_std": round(float(np.std(last_logits)), 4),
                        "max_abs_logit": round(float(np.max(np.abs(last_logits))), 4)})
        if spec.is_moe:
            # smallest gap between the k-th and (k+1)-th router logit in each forward
            entries[-1]["router_margins"] = [round(float(m), 6) for m in router_margins]
    result = {"prompts": entries}
    if spec.is_moe:
        result["min_router_margin"] = min(min(e["router_margins"]) for e in entries)
    return result


def generate_tiny(out_dir, spec, with_reference=True):
    started = time.time()
    tokenizer_dir, tokenizer_json, tokenizer_config = model_spec.load_tokenizer_files(spec)
    num_text_tokens = gguf_layout.num_text_tokens(tokenizer_json)
    hf_weights = weights.generate_all(spec, num_text_tokens)
    infos = weights.tensor_infos(spec)

    model_variants = variants.variants_for(spec)
    if any(v.container == "safetensors" for v in model_variants):
        write_hf_dir(os.path.join(out_dir, spec.name), spec, hf_weights, "F32", tokenizer_dir)
        write_hf_dir(os.path.join(out_dir, f"{spec.name}-bf16"), spec, hf_weights, "BF16", tokenizer_dir)
    plan = gguf_layout.tensor_plan(spec, infos, lambda name: [hf_weights[name]])
    tokenizer_kv = tokenizer_metadata(spec, tokenizer_json, tokenizer_config)
    write_ggufs({v: os.path.join(out_dir, v.path(spec.name)) for v in model_variants
                 if v.container == "gguf"}, spec, plan, tokenizer_kv)

    reference = {"model": spec.name, "generator_version": generator_version(),
                 "vocab_size": spec.vocab_size, "num_greedy_tokens": spec.num_greedy_tokens or NUM_GREEDY_TOKENS, "variants": {}}
    if with_reference:
        ref_dir = os.path.join(out_dir, f"{spec.name}.ref")
        os.makedirs(ref_dir, exist_ok=True)
        for variant in model_variants:
            if spec.super_blocks:
                # the weights read back from the file: the same values as variant_weights gives,
                # without quantizing the 151936 x 256 embedding a second time per variant
                reader = gguf_reader.GGUFFile(os.path.join(out_dir, variant.path(spec.name)))
                variant_weights = gguf_layout.hf_from_gguf(
                    spec, {name: reader.tensor(name) for name in reader.tensor_infos})
                del reader
            else:
                variant_weights = variants.variant_weights(hf_weights, variant, spec)
            entry = reference_for_variant(spec, variant_weights, prompts.prompts_for(spec), ref_dir,
                                          spec.name, variant.key)
            entry["path"] = variant.path(spec.name)
            reference["variants"][variant.key] = entry
        with open(os.path.join(out_dir, f"{spec.name}.reference.json"), "w") as f:
            json.dump(reference, f, indent=1)
    min_gap = min((p["min_gap"] for v in reference["variants"].values() for p in v["prompts"]), default=None)
    print(f"{spec.name}: written in {time.time() - started:.1f} s"
          + (f", min top1-top2 gap over greedy steps {min_gap:.4f}" if min_gap is not None else ""),
          flush=True)


def generate_preset(out_dir, spec, dtype_names):
    """Streams each tensor, generated row chunk by row chunk, into all preset GGUF files at once."""
    _, tokenizer_json, tokenizer_config = model_spec.load_tokenizer_files(spec)
    num_text_tokens = gguf_layout.num_text_tokens(tokenizer_json)
    infos = {info.name: info for info in weights.tensor_infos(spec)}

    def hf_chunks(name):
        info = infos[name]
        for begin in range(0, info.shape[0], weights.ROWS_PER_CHUNK):
            end = min(begin + weights.ROWS_PER_CHUNK, info.shape[0])
            yield weights.generate_rows(spec, info, begin, end, num_text_tokens)

    plan = gguf_layout.tensor_plan(spec, list(infos.values()), hf_chunks)
    tokenizer_kv = tokenizer_metadata(spec, tokenizer_json, tokenizer_config)
    num_params = sum(int(np.prod(t.shape)) for t in plan)
    print(f"{spec.name}: {num_params / 1e6:.0f} M parameters, {len(plan)} tensors", flush=True)
    paths = {variants.Variant(f"{dtype_name}-gguf", "gguf", dtype_name):
             os.path.join(out_dir, f"{spec.name}-{dtype_name}.gguf") for dtype_name in dtype_names}
    write_ggufs(paths, spec, plan, tokenizer_kv, show_progress=True)
    for path in paths.values():
        print(f"  wrote {path} ({os.path.getsize(path) / 2**20:.0f} MiB)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", help="comma-separated tiny model names (default: all)")
    parser.add_argument("--preset", help=f"write a benchmark preset instead: {', '.join(model_spec.PRESETS)}")
    parser.add_argument("--dtypes", default=",".join(model_spec.PRESET_GGUF_DTYPES),
                        help="with --preset: comma-separated GGUF dtypes (f32 for llama-quantize input)")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference logits")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.preset:
        if args.preset not in model_spec.PRESETS:
            parser.error(f"unknown preset {args.preset!r}; known: {', '.join(model_spec.PRESETS)}")
        generate_preset(args.out, model_spec.PRESETS[args.preset], args.dtypes.split(","))
        return
    names = args.only.split(",") if args.only else list(model_spec.GOLDEN_MODELS)
    for name in names:
        if name not in model_spec.GOLDEN_MODELS:
            parser.error(f"unknown model {name!r}; known: {', '.join(model_spec.GOLDEN_MODELS)}")
        generate_tiny(args.out, model_spec.GOLDEN_MODELS[name], with_reference=not args.no_reference)


if __name__ == "__main__":
    main()
