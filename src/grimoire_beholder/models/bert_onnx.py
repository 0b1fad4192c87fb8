"""Build a BERT encoder as an in-memory ONNX graph from a ``model.safetensors`` file.

Why build it ourselves: the embedded model ships as PyTorch-style safetensors weights, and the
project must run it without torch and without fetching an exported ``.onnx`` from a hub. A
BERT encoder is a short, fixed recipe (embeddings, N identical layers), so writing it out (in
ONNX's protobuf format, by :mod:`.onnx_proto`) takes a fraction of a second and lets
onnxruntime's optimiser fuse the standard patterns (bias + erf GELU into BiasGelu, MatMul +
scale into FusedMatMul) into its CPU kernels.

The graph takes ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``) and returns
``last_hidden_state`` (float32, ``[batch, seq, hidden]``); pooling stays in numpy so the caller
can pool windows of one long text however it needs. Token types are always 0 (single
sentences), so the type-0 embedding is folded into the position table. The query graph
(``word_input``) takes the word-table rows of the tokens (``word_embeddings``, float32
``[batch, seq, hidden]``, read by :mod:`.word_table`) instead of ``input_ids`` and holds no
word table: the rest of the graph, and so every vector, is the same.

onnxruntime and safetensors are imported only inside functions (here, and safetensors also in
:mod:`.word_table` for a query's rows), so that importing the package stays cheap.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grimoire_beholder.models import onnx_proto

OPSET = 17  # first opset with a standard LayerNormalization op
_HALF_MIN_SIZE = 4096  # smaller weights stay float32: their bytes do not matter


@dataclass(frozen=True)
class BertShape:
    """The few hyper-parameters of ``config.json`` that the graph depends on."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    layer_norm_eps: float

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> BertShape:
        """Read and sanity-check a Hugging Face BERT ``config.json`` mapping."""
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {config.get('hidden_act')!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        shape = cls(
            hidden=int(config["hidden_size"]),
            heads=int(config["num_attention_heads"]),
            layers=int(config["num_hidden_layers"]),
            intermediate=int(config["intermediate_size"]),
            layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
        )
        if shape.hidden % shape.heads:
            raise ValueError("hidden_size is not a multiple of num_attention_heads")
        return shape


class _GraphBuilder:
    """Accumulates serialized nodes and initializers with unique names (see :mod:`.onnx_proto`);
    ``int8`` writes the weight projections as int8 GEMMs (:meth:`linear`)."""

    def __init__(self, int8: bool = False) -> None:
        self.int8 = int8
        self.nodes: list[onnx_proto.Message] = []
        self.initializers: list[onnx_proto.Message] = []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value: np.ndarray) -> str:
        """An initializer holding ``value``. A large float32 weight that float16 holds exactly
        (the packaged weights are float16) is stored as float16 behind a ``Cast``, which
        onnxruntime folds back to float32 at load: half the bytes to store and read, the
        same numbers."""
        if value.dtype == np.float32 and value.size >= _HALF_MIN_SIZE:
            half = value.astype(np.float16)
            if np.array_equal(half.astype(np.float32), value):
                stored = self._name(hint + ".f16")
                self.initializers.append(onnx_proto.tensor(stored, half))
                return self.op("Cast", [stored], hint, to=onnx_proto.FLOAT)
        name = self._name(hint)
        self.initializers.append(onnx_proto.tensor(name, value))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str = "", **attrs: Any) -> str:
        out = self._name(hint or op_type.lower())
        self.nodes.append(onnx_proto.node(op_type, inputs, [out], **attrs))
        return out

    def ops(self, op_type: str, inputs: list[str], n_out: int, **attrs: Any) -> list[str]:
        outs = [self._name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(onnx_proto.node(op_type, inputs, outs, **attrs))
        return outs

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, hint: str) -> str:
        """``x @ weight + bias`` (``weight`` is ``[in, out]``): float32 MatMul + Add, or with
        ``int8`` onnxruntime's DynamicQuantizeMatMul — weights quantized per output column,
        symmetric, activations quantized per call — which runs on the CPU's int8 dot-product
        instructions."""
        if not self.int8:
            y = self.op("MatMul", [x, self.const(hint + ".w", _f32(weight))])
            return self.op("Add", [y, self.const(hint + ".b", _f32(bias))])
        codes, scale = quantize_columns(weight)
        inputs = [x, self.const(hint + ".q", codes), self.const(hint + ".s", scale),
                  self.const(hint + ".z", np.zeros(scale.shape, np.int8)),
                  self.const(hint + ".b", _f32(bias))]
        out = self._name(hint)
        self.nodes.append(onnx_proto.node("DynamicQuantizeMatMul", inputs, [out],
                                          domain=onnx_proto.MS_DOMAIN))
        return out


def _f32(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float32)


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 codes of an ``[in, out]`` weight and one float32 scale per output column
    (``weight ≈ codes * scale``); a column of zeros gets scale 1."""
    w = _f32(weight)
    peak = np.abs(w).max(axis=0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return np.ascontiguousarray(codes), scale


def _qkv(w: dict[str, np.ndarray], prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """Query, key and value projections side by side: one ``[hidden, 3*hidden]`` GEMM."""
    names = ("query", "key", "value")
    weight = np.concatenate([w[f"{prefix}attention.self.{n}.weight"].T for n in names], axis=1)
    bias = np.concatenate([w[f"{prefix}attention.self.{n}.bias"] for n in names])
    return _f32(weight), _f32(bias)


WORD_INPUT = "word_embeddings"
"""The query graph's input: the word-table rows of the tokens, float32 ``[batch, seq, hidden]``."""


def build_bert_graph(weights: dict[str, np.ndarray], shape: BertShape, *,
                     int8: bool = False, word_input: bool = False) -> bytes:
    """The serialized ONNX model of the BERT encoder whose weights are ``weights``; with
    ``int8`` its projections are int8 GEMMs (see :meth:`_GraphBuilder.linear`); with
    ``word_input`` it takes :data:`WORD_INPUT` instead of ``input_ids`` and holds no word
    table (the query graph: 11 MB instead of 35 with int8).

    ``weights`` uses the Hugging Face ``BertModel`` names (``embeddings.*``,
    ``encoder.layer.N.*``), optionally prefixed with ``bert.``. Linear weights are stored
    ``[out, in]`` and are transposed once here so every projection is a plain MatMul.

    Only standard ONNX ops are used. Writing the layers with onnxruntime's contrib kernels
    (``Attention``, ``SkipLayerNormalization``, ``BiasGelu``) was measured and gave no speed-up
    on CPU (the GEMMs dominate, and onnxruntime already fuses GELU and the MatMul+scale), so
    the portable form is kept.
    """
    w = {k.removeprefix("bert."): v for k, v in weights.items()}
    g = _GraphBuilder(int8)

    # Embeddings: word + (position + token-type-0), then LayerNorm.
    if word_input:
        word = WORD_INPUT
        first = onnx_proto.value_info(WORD_INPUT, onnx_proto.FLOAT, ["batch", "seq", shape.hidden])
    else:
        word = _word_embeddings(g, w["embeddings.word_embeddings.weight"])
        first = onnx_proto.value_info("input_ids", onnx_proto.INT64, ["batch", "seq"])
    pos_table = (w["embeddings.position_embeddings.weight"]
                 + w["embeddings.token_type_embeddings.weight"][0])
    seq_len = g.op("Slice", [g.op("Shape", [WORD_INPUT if word_input else "input_ids"]),
                             g.const("one", np.array([1], np.int64)),
                             g.const("two", np.array([2], np.int64))], "seq_len")
    pos = g.op("Slice", [g.const("pos_emb", _f32(pos_table)),
                         g.const("zero", np.array([0], np.int64)), seq_len,
                         g.const("axis0", np.array([0], np.int64))], "pos")
    x = g.op("LayerNormalization",
             [g.op("Add", [word, pos]), g.const("emb_ln.g", _f32(w["embeddings.LayerNorm.weight"])),
              g.const("emb_ln.b", _f32(w["embeddings.LayerNorm.bias"]))],
             "ln", axis=-1, epsilon=shape.layer_norm_eps)

    x = _encoder_layers(g, w, shape, x)

    x = g.op("Identity", [x], "last_hidden_state")
    return onnx_proto.model(
        g.nodes,
        "bert_encoder",
        [first, onnx_proto.value_info("attention_mask", onnx_proto.INT64, ["batch", "seq"])],
        [onnx_proto.value_info(x, onnx_proto.FLOAT, ["batch", "seq", shape.hidden])],
        g.initializers,
        opset=OPSET,
        ir_version=8,  # readable by every onnxruntime the project allows (>= 1.18)
        producer="grimoire-beholder",
        domains=[(onnx_proto.MS_DOMAIN, 1)] if int8 else [],
    )


def _word_embeddings(g: _GraphBuilder, table: np.ndarray) -> str:
    """The rows of the word-embedding table for ``input_ids``, as float32. A table that
    float16 holds exactly (the packaged one) stays float16 in the session and only the rows
    looked up are cast: it is half the model's weights, so a process holds and loads 47 MB
    less than with a float32 copy."""
    half = np.asarray(table).astype(np.float16)
    if not np.array_equal(half.astype(np.float32), _f32(table)):
        return g.op("Gather", [g.const("word_emb", _f32(table)), "input_ids"], "word", axis=0)
    stored = g._name("word_emb.f16")
    g.initializers.append(onnx_proto.tensor(stored, half))
    rows = g.op("Gather", [stored, "input_ids"], "word_f16", axis=0)
    return g.op("Cast", [rows], "word", to=onnx_proto.FLOAT)


def _encoder_layers(g: _GraphBuilder, w: dict[str, np.ndarray], shape: BertShape, x: str) -> str:
    """The N identical encoder layers: self-attention then feed-forward, post-LayerNorm."""
    hidden, heads = shape.hidden, shape.heads
    head_dim = hidden // heads
    eps = shape.layer_norm_eps

    def linear(x: str, prefix: str) -> str:
        return g.linear(x, w[prefix + ".weight"].T, w[prefix + ".bias"], prefix)

    def layer_norm(x: str, prefix: str) -> str:
        gamma = g.const(prefix + ".g", _f32(w[prefix + ".weight"]))
        beta = g.const(prefix + ".b", _f32(w[prefix + ".bias"]))
        return g.op("LayerNormalization", [x, gamma, beta], "ln", axis=-1, epsilon=eps)

    # Additive attention mask, [batch, 1, 1, seq]: 0 where attended, a huge negative at padding,
    # as transformers does with (1 - mask) * finfo(float32).min.
    mask = g.op("Cast", ["attention_mask"], "maskf", to=onnx_proto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("axes12", np.array([1, 2], np.int64))])
    inverted = g.op("Sub", [g.const("f_one", np.array(1.0, np.float32)), mask])
    f_min = g.const("f_min", np.array(np.finfo(np.float32).min, np.float32))
    mask_bias = g.op("Mul", [inverted, f_min], "mask_bias")

    split_heads = g.const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    f_one = g.const("one_f", np.array(1.0, np.float32))
    split = g.const("split", np.array([hidden] * 3, np.int64))

    for i in range(shape.layers):
        p = f"encoder.layer.{i}."
        qkv_w, qkv_b = _qkv(w, p)
        qkv = g.linear(x, qkv_w, qkv_b, "qkv")
        q, k, v = g.ops("Split", [qkv, split], 3, axis=-1)
        q = g.op("Transpose", [g.op("Reshape", [q, split_heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k, split_heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, split_heads])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask_bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merge_heads])
        attn = linear(ctx, p + "attention.output.dense")
        x = layer_norm(g.op("Add", [attn, x]), p + "attention.output.LayerNorm")

        # Feed-forward with exact (erf) GELU, as BERT's "gelu" is.
        h = linear(x, p + "intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [h, sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, f_one])]), half])
        out = linear(h, p + "output.dense")
        x = layer_norm(g.op("Add", [out, x]), p + "output.LayerNorm")
    return x


def default_threads() -> int:
    """CPUs this process may actually run on (container- and affinity-aware), at least 1."""
    from grimoire_beholder import portable

    return portable.cpu_count()


def load_session(model_dir: Path, threads: int | None = None, *, int8: bool = False,
                 word_input: bool = False) -> Any:
    """An onnxruntime CPU ``InferenceSession`` for the BERT encoder in ``model_dir`` (its
    projections int8 GEMMs with ``int8``; the query graph with ``word_input``).

    The graph comes from the per-user cache (:mod:`.graph_cache`) when a current copy is
    there, else it is built from the weights (a few tenths of a CPU-second) and cached for
    the next process. onnxruntime then applies all its graph optimisations. A cached graph
    onnxruntime cannot load, or that is not the graph asked for (another variant's file or
    any other model copied under its name: other inputs or outputs, or int8 GEMMs where none
    belong or none where they do), is deleted and the graph built once more, so a wrong file
    in the cache never stops a search.
    """
    import json

    from grimoire_beholder.models import graph_cache

    shape = BertShape.from_config(
        json.loads((model_dir / "config.json").read_text(encoding="utf-8")))
    built: list[bytes] = []

    def build() -> bytes:
        from safetensors.numpy import load_file

        built.append(build_bert_graph(load_file(str(model_dir / "model.safetensors")), shape,
                                      int8=int8, word_input=word_input))
        return built[-1]

    # "query-…", not "…-query": a variant's eviction globs "<variant>-*"
    variant = ("query-" if word_input else "") + ("int8" if int8 else "float32")
    serialized = graph_cache.cached_graph(model_dir, variant, build)
    if built:
        return cpu_session(serialized, threads)
    try:
        session = cpu_session(serialized, threads)
    except Exception:  # onnxruntime's own kinds (InvalidGraph, Fail, …): not our graph
        session = None
    if session is not None and _is_graph(session, serialized, shape, int8=int8,
                                         word_input=word_input):
        return session
    graph_cache.discard(model_dir, variant)
    return cpu_session(graph_cache.cached_graph(model_dir, variant, build), threads)


def _is_graph(session: Any, serialized: bytes, shape: BertShape, *, int8: bool,
              word_input: bool) -> bool:
    """Whether ``session`` runs the graph :func:`build_bert_graph` writes for these options:
    its inputs and output by name, type and shape, and int8 GEMMs exactly when asked for."""
    first = ((WORD_INPUT, "tensor(float)", ["batch", "seq", shape.hidden]) if word_input
             else ("input_ids", "tensor(int64)", ["batch", "seq"]))
    inputs = [(i.name, i.type, list(i.shape)) for i in session.get_inputs()]
    outputs = [(o.name.startswith("last_hidden_state"), o.type, list(o.shape))
               for o in session.get_outputs()]
    return (inputs == [first, ("attention_mask", "tensor(int64)", ["batch", "seq"])]
            and outputs == [(True, "tensor(float)", ["batch", "seq", shape.hidden])]
            and (b"DynamicQuantizeMatMul" in serialized) == int8)


def cpu_session(model: bytes | str, threads: int | None = None) -> Any:
    """An onnxruntime CPU session for a serialised graph or a ``.onnx`` path, set up the way
    every model here runs: all graph optimisations, one inter-op thread, quiet logs."""
    # onnxruntime's telemetry otherwise writes a device id and an event store under
    # ~/.cache/Microsoft on import (Linux wheels too): an offline reader must leave no trace
    # in HOME. The variable is read when the library loads, so it is set before the import.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads or default_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: no optimiser chatter on stderr
    # Idle worker threads sleep instead of busy-waiting. Ingest, the MCP server and the user's
    # other programs share the cores; measured under contention, spinning burned ~20% more
    # CPU per chunk for no wall-clock gain.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, sess_options=options,
                                providers=["CPUExecutionProvider"])
