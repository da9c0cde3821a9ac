"""A small GGUF v3 reader, used to check what gguf_writer wrote (and by
check tools that want a file's metadata, and the llama.cpp fixture check).
Dequantizes every type gguf_writer knows (reference/numerics.py, reference/quants.py)."""
import struct
import numpy as np

from reference import numerics, quants
import gguf_writer as gw


class GGUFFile:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.pos = 0
        magic = self.data[:4]
        if magic != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file (magic {magic!r})")
        self.pos = 4
        version, num_tensors, num_kv = self._unpack("<IQQ")
        if version != 3:
            raise ValueError(f"{path}: GGUF version {version}, expected 3")
        self.metadata = {}
        self.metadata_types = {}
        for _ in range(num_kv):
            key = self._string()
            (value_type,) = self._unpack("<I")
            self.metadata[key] = self._value(value_type)
            self.metadata_types[key] = value_type
        self.tensor_infos = {}   # name -> (shape outermost-first, ggml_type, offset)
        for _ in range(num_tensors):
            name = self._string()
            (num_dims,) = self._unpack("<I")
            dims = self._unpack(f"<{num_dims}Q")
            ggml_type, offset = self._unpack("<IQ")
            self.tensor_infos[name] = (tuple(reversed(dims)), ggml_type, offset)
        alignment = self.metadata.get("general.alignment", gw.DEFAULT_ALIGNMENT)
        self.data_start = self.pos + (-self.pos % alignment)
        for name, (shape, ggml_type, offset) in self.tensor_infos.items():
            if offset % alignment:
                raise ValueError(f"{path}: tensor {name} offset {offset} not aligned")
            if self.data_start + offset + gw.tensor_nbytes(shape, ggml_type) > len(self.data):
                raise ValueError(f"{path}: tensor {name} runs past the end of the file")

    def _unpack(self, fmt):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def _string(self):
        (length,) = self._unpack("<Q")
        text = self.data[self.pos:self.pos + length].decode("utf-8")
        self.pos += length
        return text

    def _value(self, value_type):
        if value_type == gw.STRING:
            return self._string()
        if value_type == gw.ARRAY:
            item_type, count = self._unpack("<IQ")
            if item_type == gw.STRING:
                return self._string_array(count)
            if item_type in gw._SCALAR_FORMATS:
                dtype = np.dtype(gw._SCALAR_FORMATS[item_type])
                items = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
                self.pos += count * dtype.itemsize
                return items.tolist()
            return [self._value(item_type) for _ in range(count)]
        (value,) = self._unpack(gw._SCALAR_FORMATS[value_type])
        return value

    def _string_array(self, count):
        # vocabularies hold ~150K strings: a tight loop instead of _value per item
        data, pos, unpack_from, out = self.data, self.pos, struct.unpack_from, []
        for _ in range(count):
            (length,) = unpack_from("<Q", data, pos)
            pos += 8
            out.append(data[pos:pos + length].decode("utf-8"))
            pos += length
        self.pos = pos
        return out

    def raw(self, name):
        shape, ggml_type, offset = self.tensor_infos[name]
        begin = self.data_start + offset
        return memoryview(self.data)[begin:begin + gw.tensor_nbytes(shape, ggml_type)]

    def tensor(self, name):
        """-> float32 array, shape outermost-first."""
        shape, ggml_type, _ = self.tensor_infos[name]
        raw = self.raw(name)
        num_values = int(np.prod(shape))
        if ggml_type == gw.GGML_F32:
            return np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)
        if ggml_type == gw.GGML_F16:
            return np.frombuffer(raw, dtype="<f2").reshape(shape).astype(np.float32)
        if ggml_type == gw.GGML_BF16:
            return numerics.bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2")).reshape(shape)
        if ggml_type == gw.GGML_Q8_0:
            return numerics.dequantize_q8_0(*numerics.unpack_q8_0(raw, num_values // numerics.QK), shape)
        if ggml_type == gw.GGML_Q4_0:
            return numerics.dequantize_q4_0(*numerics.unpack_q4_0(raw, num_values // numerics.QK), shape)
        if gw.GGML_NAME_BY_TYPE.get(ggml_type) in quants.FORMATS:
            return quants.dequantize(raw, gw.GGML_NAME_BY_TYPE[ggml_type], shape)
        raise ValueError(f"{name}: ggml type {ggml_type} not supported")
