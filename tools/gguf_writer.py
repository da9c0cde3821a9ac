"""A streaming GGUF v3 writer, written from the GGUF spec.

File layout (little-endian):
  "GGUF", u32 version=3, u64 num_tensors, u64 num_kv
  num_kv x (string key, u32 value_type, value)
  num_tensors x (string name, u32 num_dims, u64 dims[num_dims] innermost-first,
                 u32 ggml_type, u64 offset from the data section start)
  padding to `general.alignment`, then the tensor data, each tensor aligned.
Strings are u64 length + UTF-8 bytes. Arrays are u32 item type, u64 count, items.

Usage: declare every key and tensor (shape + type), call write_header(), then
write_tensor() in declaration order; tensor data may come in row chunks, so a
large model never has to sit in memory.
"""
import struct
import numpy as np

from reference import numerics, quants

# GGUF metadata value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_SCALAR_FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
                   FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}

# ggml tensor types (ggml.h's enum ggml_type)
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_BF16 = 0, 1, 2, 8, 30
GGML_TYPE_BY_NAME = {"f32": GGML_F32, "f16": GGML_F16, "q4_0": GGML_Q4_0, "q8_0": GGML_Q8_0, "bf16": GGML_BF16,
                     "q4_1": 3, "q5_0": 6, "q5_1": 7, "q2_k": 10, "q3_k": 11, "q4_k": 12, "q5_k": 13,
                     "q6_k": 14, "q8_k": 15, "iq4_nl": 20, "iq4_xs": 23, "mxfp4": 39}
GGML_NAME_BY_TYPE = {ggml_type: name for name, ggml_type in GGML_TYPE_BY_NAME.items()}
# llama.cpp's general.file_type values (LLAMA_FTYPE_*; the *_M mixes name their main type)
FILE_TYPE_BY_NAME = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q2_k": 10,
                     "q3_k": 12, "q4_k": 15, "q5_k": 17, "q6_k": 18, "iq4_nl": 25, "iq4_xs": 30, "bf16": 32,
                     "mxfp4": 38}

DEFAULT_ALIGNMENT = 32


def block_size(ggml_type):
    name = GGML_NAME_BY_TYPE.get(ggml_type)
    if name in quants.FORMATS:
        return quants.block_size(name)
    return numerics.QK if ggml_type in (GGML_Q8_0, GGML_Q4_0) else 1


def tensor_nbytes(shape, ggml_type):
    num_values = int(np.prod(shape))
    if ggml_type == GGML_F32:
        return 4 * num_values
    if ggml_type in (GGML_F16, GGML_BF16):
        return 2 * num_values
    if ggml_type == GGML_Q8_0:
        return num_values // numerics.QK * numerics.Q8_0_BLOCK_BYTES
    if ggml_type == GGML_Q4_0:
        return num_values // numerics.QK * numerics.Q4_0_BLOCK_BYTES
    if GGML_NAME_BY_TYPE.get(ggml_type) in quants.FORMATS:
        return quants.nbytes(num_values, GGML_NAME_BY_TYPE[ggml_type])
    raise ValueError(f"ggml type {ggml_type} not supported")


def encode_tensor_data(values, ggml_type):
    """float32 rows (quantized along the last axis) -> the bytes GGUF stores."""
    if ggml_type == GGML_F32:
        return np.ascontiguousarray(values, dtype="<f4").tobytes()
    if ggml_type == GGML_F16:
        return np.ascontiguousarray(values, dtype="<f2").tobytes()
    if ggml_type == GGML_BF16:
        return numerics.bf16_bits(values).astype("<u2").tobytes()
    if ggml_type == GGML_Q8_0:
        return numerics.q8_0_bytes(*numerics.quantize_q8_0(values))
    if ggml_type == GGML_Q4_0:
        return numerics.q4_0_bytes(*numerics.quantize_q4_0(values))
    if GGML_NAME_BY_TYPE.get(ggml_type) in quants.FORMATS:
        return quants.quantize(values, GGML_NAME_BY_TYPE[ggml_type])
    raise ValueError(f"ggml type {ggml_type} not supported")


def _string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(value_type, value):
    if value_type == STRING:
        return _string(value)
    return struct.pack(_SCALAR_FORMATS[value_type], value)


class GGUFMetadata:
    """Typed key/value pairs, encoded as they are added (so a block such as a
    tokenizer vocabulary can be encoded once and copied into several files)."""
    def __init__(self):
        self.kv = []              # (key, bytes of type + value)

    def extend(self, other):
        for key, typed_value in other.kv:
            self._append(key, typed_value)

    def _append(self, key, typed_value):
        if any(existing == key for existing, _ in self.kv):
            raise ValueError(f"duplicate GGUF key {key}")
        self.kv.append((key, typed_value))

    def add(self, key, value_type, value):
        self._append(key, struct.pack("<I", value_type) + _value(value_type, value))

    def add_array(self, key, item_type, items):
        body = struct.pack("<IQ", item_type, len(items))
        if item_type == STRING:
            body += b"".join(_string(item) for item in items)
        else:
            body += np.asarray(items, dtype=np.dtype(_SCALAR_FORMATS[item_type])).tobytes()
        self._append(key, struct.pack("<I", ARRAY) + body)

    def add_u32(self, key, value):
        self.add(key, UINT32, int(value))

    def add_f32(self, key, value):
        self.add(key, FLOAT32, float(value))

    def add_bool(self, key, value):
        self.add(key, BOOL, bool(value))

    def add_string(self, key, value):
        self.add(key, STRING, value)


class GGUFWriter(GGUFMetadata):
    def __init__(self, path, alignment=DEFAULT_ALIGNMENT):
        super().__init__()
        self.path = path
        self.alignment = alignment
        self.tensors = []         # (name, shape outermost-first, ggml_type, offset, nbytes)
        self.data_bytes = 0
        self.file = None
        self.next_tensor = 0
        self.add_u32("general.alignment", alignment)

    # ---- tensors
    def add_tensor_info(self, name, shape, ggml_type):
        """shape outermost-first, as numpy holds it ({out, in} for a linear weight)."""
        if shape[-1] % block_size(ggml_type):
            raise ValueError(f"{name}: in-dim {shape[-1]} not a multiple of {block_size(ggml_type)}")
        nbytes = tensor_nbytes(shape, ggml_type)
        self.tensors.append((name, tuple(shape), ggml_type, self.data_bytes, nbytes))
        self.data_bytes += nbytes + (-nbytes % self.alignment)

    def write_header(self):
        self.file = open(self.path, "wb")
        out = self.file
        out.write(b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)))
        for key, typed_value in self.kv:
            out.write(_string(key) + typed_value)
        for name, shape, ggml_type, offset, _ in self.tensors:
            dims = list(reversed(shape))  # GGUF lists dims innermost-first
            out.write(_string(name) + struct.pack(f"<I{len(dims)}Q", len(dims), *dims))
            out.write(struct.pack("<IQ", ggml_type, offset))
        out.write(b"\0" * (-out.tell() % self.alignment))
        self.data_start = out.tell()

    def write_tensor(self, name, row_chunks):
        """row_chunks: float32 arrays whose concatenation along axis 0 is the tensor."""
        self.begin_tensor(name)
        for chunk in row_chunks:
            self.write_rows(chunk)
        self.end_tensor()

    def begin_tensor(self, name):
        expected_name, _, _, offset, _ = self.tensors[self.next_tensor]
        if name != expected_name:
            raise ValueError(f"tensor {name} written out of order (expected {expected_name})")
        if self.file.tell() != self.data_start + offset:
            raise AssertionError(f"{name}: at {self.file.tell()}, expected {self.data_start + offset}")
        self.rows_written, self.bytes_written = 0, 0

    def write_rows(self, chunk):
        """The next rows (outermost axis) of the current tensor, quantized along the last axis."""
        name, shape, ggml_type, _, _ = self.tensors[self.next_tensor]
        if tuple(chunk.shape[1:]) != shape[1:]:
            raise ValueError(f"{name}: chunk shape {chunk.shape} does not fit {shape}")
        data = encode_tensor_data(chunk, ggml_type)
        self.file.write(data)
        self.rows_written += chunk.shape[0]
        self.bytes_written += len(data)

    def end_tensor(self):
        name, shape, _, _, nbytes = self.tensors[self.next_tensor]
        if self.rows_written != shape[0] or self.bytes_written != nbytes:
            raise ValueError(f"{name}: wrote {self.rows_written} rows / {self.bytes_written} bytes, "
                             f"expected {shape[0]} / {nbytes}")
        self.file.write(b"\0" * (-self.bytes_written % self.alignment))
        self.next_tensor += 1

    def close(self):
        if self.next_tensor != len(self.tensors):
            raise ValueError(f"{self.path}: only {self.next_tensor} of {len(self.tensors)} tensors written")
        self.file.close()
