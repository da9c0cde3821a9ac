"""safetensors files: 8-byte little-endian header length, a JSON header
{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}
(offsets relative to the data that follows the header), then the raw data.
Sharded checkpoints add model.safetensors.index.json {metadata, weight_map}."""
import json
import os
import struct
import numpy as np

from . import numerics


def _encode(array, dtype_name):
    if dtype_name == "F32":
        return np.ascontiguousarray(array, dtype="<f4").tobytes()
    if dtype_name == "BF16":
        return numerics.bf16_bits(array).astype("<u2").tobytes()
    if dtype_name == "F16":
        return np.ascontiguousarray(array, dtype="<f2").tobytes()
    raise ValueError(dtype_name)


def write_file(path, tensors, dtype_name):
    """tensors: list of (name, float32 array); all stored as dtype_name (F32/BF16/F16)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in tensors:
        blob = _encode(array, dtype_name)
        header[name] = {"dtype": dtype_name, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header_bytes = json.dumps(header, separators=(",", ":")).encode()
    header_bytes += b" " * (-len(header_bytes) % 8)   # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for blob in blobs:
            f.write(blob)
    return offset


def write_checkpoint(directory, tensors, dtype_name, num_shards):
    """Writes model.safetensors, or num_shards shards plus the index."""
    if num_shards == 1:
        write_file(os.path.join(directory, "model.safetensors"), tensors, dtype_name)
        return
    # split by tensor count, keeping file order
    per_shard = -(-len(tensors) // num_shards)
    weight_map, total_bytes = {}, 0
    for shard in range(num_shards):
        file_name = f"model-{shard + 1:05d}-of-{num_shards:05d}.safetensors"
        part = tensors[shard * per_shard:(shard + 1) * per_shard]
        total_bytes += write_file(os.path.join(directory, file_name), part, dtype_name)
        weight_map.update({name: file_name for name, _ in part})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total_bytes}, "weight_map": weight_map}, f, indent=2)


def read_file(path):
    """-> name -> float32 array."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[base + begin:base + end]
        if entry["dtype"] == "F32":
            array = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif entry["dtype"] == "BF16":
            array = numerics.bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        elif entry["dtype"] == "F16":
            array = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise ValueError(f"{path}: {name}: dtype {entry['dtype']} not handled")
        out[name] = array.reshape(entry["shape"])
    return out


def read_checkpoint(directory):
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if not os.path.exists(index_path):
        return read_file(os.path.join(directory, "model.safetensors"))
    with open(index_path) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for file_name in sorted(set(weight_map.values())):
        out.update(read_file(os.path.join(directory, file_name)))
    return out
