"""The hand-written ONNX protobuf writer equals onnx.helper's output, message for message.

The onnx package is a dev dependency only: the runtime writes the graph with
``models/onnx_proto.py``. End to end, ``test_models_embedded.py`` checks the written model's
vectors against sentence-transformers' reference vectors.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from grimoire_beholder.models import onnx_proto


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    np.array(np.finfo(np.float32).min, np.float32),
    np.array([0, -1, 2**40], np.int64),
    np.array(3, np.int64),
])
def test_tensors_match(array: np.ndarray) -> None:
    written = TensorProto.FromString(onnx_proto.encode(onnx_proto.tensor("t", array)))
    assert written == numpy_helper.from_array(array, "t")
    np.testing.assert_array_equal(numpy_helper.to_array(written), array)


def test_nodes_with_every_attribute_kind_match() -> None:
    attrs = {"axis": -1, "epsilon": 1e-12, "perm": [0, 2, 1, 3], "to": onnx_proto.FLOAT}
    written = onnx.NodeProto.FromString(
        onnx_proto.encode(onnx_proto.node("Op", ["a", "b"], ["c", "d"], **attrs)))
    assert written == helper.make_node("Op", ["a", "b"], ["c", "d"], **attrs)


def test_a_model_matches_and_runs() -> None:
    weight = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    inputs = [("x", ["batch", 2])]
    written = onnx_proto.model(
        [onnx_proto.node("MatMul", ["x", "w"], ["y"])], "g",
        [onnx_proto.value_info(n, onnx_proto.FLOAT, d) for n, d in inputs],
        [onnx_proto.value_info("y", onnx_proto.FLOAT, ["batch", 2])],
        [onnx_proto.tensor("w", weight)], opset=17, ir_version=8, producer="p")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        initializer=[numpy_helper.from_array(weight, "w")])
    expected = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                 producer_name="p")
    expected.ir_version = 8
    parsed = onnx.ModelProto.FromString(written)
    assert parsed == expected
    onnx.checker.check_model(parsed)
    session = ort.InferenceSession(written, providers=["CPUExecutionProvider"])
    x = np.array([[1.0, 1.0]], np.float32)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], x @ weight)


def test_unsupported_attributes_are_refused() -> None:
    with pytest.raises(TypeError):
        onnx_proto.attribute("flag", True)
