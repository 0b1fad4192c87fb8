"""Just enough of the ONNX protobuf format to write the BERT graph, without the onnx package.

The messages :mod:`.bert_onnx` needs (model, graph, node, attribute, tensor, value info) in
protobuf's wire format, with the field numbers of ``onnx.proto``; onnxruntime takes the bytes.
``tests/test_onnx_proto.py`` parses the output with the real onnx package and compares it
message for message with ``onnx.helper``'s. Why there is no onnx at run time: ARCHITECTURE.md,
"Packaging".
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import numpy as np

FLOAT = 1  # TensorProto.DataType
INT8 = 3
INT64 = 7
FLOAT16 = 10
_DATA_TYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.int8): INT8, np.dtype(np.int64): INT64,
               np.dtype(np.float16): FLOAT16}
MS_DOMAIN = "com.microsoft"  # onnxruntime's contrib operators
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7  # AttributeProto.AttributeType


Message = list[bytes | memoryview]
"""A message's encoding in pieces: joined once, so the weights are copied once, not per level."""


def encode(message: Message) -> bytes:
    return b"".join(message)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s are ten-byte two's complement varints
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> Message:
    return [_varint(field << 3) + _varint(value)]


def _float(field: int, value: float) -> Message:
    return [_varint(field << 3 | 5) + struct.pack("<f", value)]


def _sub(field: int, message: Message) -> Message:
    """A length-delimited field: a string, raw bytes or an embedded message."""
    return [_varint(field << 3 | 2) + _varint(sum(len(part) for part in message)), *message]


def _str(field: int, value: str) -> Message:
    return _sub(field, [value.encode("utf-8")])


def _repeated(field: int, messages: Iterable[Message]) -> Message:
    return [part for message in messages for part in _sub(field, message)]


def tensor(name: str, array: np.ndarray) -> Message:
    """A TensorProto holding ``array`` (float32, float16, int8 or int64, any rank) as
    little-endian raw data."""
    data_type = _DATA_TYPES[array.dtype]
    little = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False))
    raw = little.reshape(-1).view(np.uint8).data  # a view: the weights are not copied here
    dims = [part for d in array.shape for part in _int(1, d)]
    return [*dims, *_int(2, data_type), *_str(8, name), *_sub(9, [raw])]


def attribute(name: str, value: int | float | Sequence[int]) -> Message:
    """An AttributeProto: an int, a float or a list of ints (all the graph uses)."""
    if isinstance(value, bool) or not isinstance(value, int | float | list | tuple):
        raise TypeError(f"unsupported attribute {name}={value!r}")
    if isinstance(value, int):
        return [*_str(1, name), *_int(3, value), *_int(20, _ATTR_INT)]
    if isinstance(value, float):
        return [*_str(1, name), *_float(2, value), *_int(20, _ATTR_FLOAT)]
    return [*_str(1, name), *(p for v in value for p in _int(8, v)), *_int(20, _ATTR_INTS)]


def node(op_type: str, inputs: Sequence[str], outputs: Sequence[str], *, domain: str = "",
         **attrs: int | float | Sequence[int]) -> Message:
    """A NodeProto, of the default (ai.onnx) domain unless ``domain`` names another;
    attributes in sorted order, as onnx.helper."""
    return [*(p for i in inputs for p in _str(1, i)), *(p for o in outputs for p in _str(2, o)),
            *_str(4, op_type), *_repeated(5, (attribute(k, v) for k, v in sorted(attrs.items()))),
            *(_str(7, domain) if domain else [])]


def value_info(name: str, elem_type: int, dims: Sequence[int | str]) -> Message:
    """A tensor ValueInfoProto; a str dimension is symbolic (``batch``), an int fixed."""
    shape = _repeated(1, (_int(1, d) if isinstance(d, int) else _str(2, d) for d in dims))
    tensor_type = [*_int(1, elem_type), *_sub(2, shape)]
    return [*_str(1, name), *_sub(2, _sub(1, tensor_type))]


def model(nodes: Sequence[Message], name: str, inputs: Sequence[Message],
          outputs: Sequence[Message], initializers: Sequence[Message], *, opset: int,
          ir_version: int, producer: str, domains: Sequence[tuple[str, int]] = ()) -> bytes:
    """A serialized ModelProto around one graph, importing the default domain at ``opset``
    and each ``(domain, version)`` of ``domains``."""
    graph = [*_repeated(1, nodes), *_str(2, name), *_repeated(5, initializers),
             *_repeated(11, inputs), *_repeated(12, outputs)]
    imports = [[*_str(1, domain), *_int(2, version)] for domain, version in [("", opset), *domains]]
    return encode([*_int(1, ir_version), *_str(2, producer), *_sub(7, graph),
                   *_repeated(8, imports)])
