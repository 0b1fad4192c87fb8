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
    np.array([[-128, 0], [5, 127]], np.int8),
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


def test_a_node_of_another_domain_matches() -> None:
    written = onnx.NodeProto.FromString(onnx_proto.encode(
        onnx_proto.node("DynamicQuantizeMatMul", ["a", "b"], ["c"], domain=onnx_proto.MS_DOMAIN)))
    assert written == helper.make_node("DynamicQuantizeMatMul", ["a", "b"], ["c"],
                                       domain="com.microsoft")


def test_a_model_importing_the_contrib_domain_matches_and_runs() -> None:
    weight = np.array([[1, -2], [3, 4]], np.int8)
    scale = np.array([0.5, 0.25], np.float32)
    node = ("DynamicQuantizeMatMul", ["x", "w", "s"], ["y"])
    written = onnx_proto.model(
        [onnx_proto.node(*node, domain=onnx_proto.MS_DOMAIN)], "g",
        [onnx_proto.value_info("x", onnx_proto.FLOAT, ["batch", 2])],
        [onnx_proto.value_info("y", onnx_proto.FLOAT, ["batch", 2])],
        [onnx_proto.tensor("w", weight), onnx_proto.tensor("s", scale)],
        opset=17, ir_version=8, producer="p", domains=[(onnx_proto.MS_DOMAIN, 1)])
    graph = helper.make_graph(
        [helper.make_node(*node, domain="com.microsoft")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        initializer=[numpy_helper.from_array(weight, "w"), numpy_helper.from_array(scale, "s")])
    expected = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                       helper.make_opsetid("com.microsoft", 1)],
                                 producer_name="p")
    expected.ir_version = 8
    assert onnx.ModelProto.FromString(written) == expected
    session = ort.InferenceSession(written, providers=["CPUExecutionProvider"])
    x = np.array([[1.0, 2.0]], np.float32)
    # x quantizes exactly (two levels apart), so the product is exact.
    np.testing.assert_allclose(session.run(None, {"x": x})[0], x @ (weight * scale), rtol=0.02)


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
