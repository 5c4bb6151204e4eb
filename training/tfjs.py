"""Reading a TensorFlow.js graph model (model.json + weight shards) without TensorFlow.

A TF.js graph model is a GraphDef written as JSON (`modelTopology.node`: name, op, inputs,
attrs) and a `weightsManifest` listing every constant in the order its bytes follow one
another in the shards. Weights quantised to float16 (`quantization.dtype == "float16"`) are
stored as 2-byte halves; int32 constants as 4-byte little-endian ints.

`run_graph` evaluates the graph with numpy for the ops the NanoDet export uses. It is not
used for training: it is the reference the ported PyTorch module (`model.py`) is checked
against, so the port is proven on the numbers, not only on the shapes.
"""
from __future__ import annotations

import base64
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

_DTYPES = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}


@dataclass
class Node:
    name: str
    op: str
    inputs: list[str]
    attr: dict = field(default_factory=dict)


@dataclass
class Graph:
    nodes: list[Node]
    weights: dict[str, np.ndarray]
    inputs: dict[str, list[int]]
    outputs: list[str]


def _attr(raw: dict) -> dict:
    out = {}
    for key, value in raw.items():
        if "list" in value:
            lst = value["list"]
            if "i" in lst:
                out[key] = [int(x) for x in lst["i"]]
            elif "s" in lst:
                out[key] = [base64.b64decode(x).decode() for x in lst["s"]]
            elif "f" in lst:
                out[key] = [float(x) for x in lst["f"]]
            else:
                out[key] = []
        elif "f" in value:
            out[key] = float(value["f"])
        elif "i" in value:
            out[key] = int(value["i"])
        elif "b" in value:
            out[key] = bool(value["b"])
        elif "s" in value:
            out[key] = base64.b64decode(value["s"]).decode()
    return out


def load_graph(model_json: str) -> Graph:
    with open(model_json, encoding="utf8") as f:
        doc = json.load(f)
    if doc.get("format") != "graph-model":
        raise ValueError(f"{model_json}: not a TF.js graph model (format {doc.get('format')!r})")
    folder = os.path.dirname(model_json)
    weights: dict[str, np.ndarray] = {}
    for group in doc["weightsManifest"]:
        blob = b"".join(open(os.path.join(folder, p), "rb").read() for p in group["paths"])
        offset = 0
        for w in group["weights"]:
            shape = [int(s) for s in w["shape"]]
            count = math.prod(shape) if shape else 1
            quant = w.get("quantization")
            if quant and quant.get("dtype") == "float16":
                size = 2 * count
                arr = np.frombuffer(blob, dtype="<f2", count=count, offset=offset).astype(np.float32)
            elif quant:
                raise ValueError(f"{w['name']}: quantisation {quant} is not supported")
            else:
                dtype = np.dtype(_DTYPES[w["dtype"]]).newbyteorder("<")
                size = dtype.itemsize * count
                arr = np.frombuffer(blob, dtype=dtype, count=count, offset=offset).astype(_DTYPES[w["dtype"]])
            weights[w["name"]] = arr.reshape(shape)
            offset += size
        if offset != len(blob):
            raise ValueError(f"{model_json}: the manifest accounts for {offset} bytes, the shards hold {len(blob)}")
    nodes = [
        Node(n["name"], n["op"], list(n.get("input", [])), _attr(n.get("attr", {})))
        for n in doc["modelTopology"]["node"]
    ]
    sig = doc.get("signature", {})
    inputs = {
        k.split(":")[0]: [int(d["size"]) for d in v["tensorShape"]["dim"]] for k, v in sig.get("inputs", {}).items()
    }
    outputs = sorted(k.split(":")[0] for k in sig.get("outputs", {}))
    return Graph(nodes, weights, inputs, outputs)


def _leaky(x, alpha):
    return np.where(x >= 0, x, alpha * x)


def _conv2d_nhwc(x: np.ndarray, w: np.ndarray, strides, padding: str) -> np.ndarray:
    # Through torch: numpy has no convolution, and this is only for checking.
    import torch
    import torch.nn.functional as F

    if padding != "VALID":
        raise ValueError(f"Conv2D padding {padding} is not supported (the export pads explicitly)")
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    wt = torch.from_numpy(np.ascontiguousarray(w.transpose(3, 2, 0, 1)))  # HWIO -> OIHW
    groups = xt.shape[1] // wt.shape[1]
    y = F.conv2d(xt, wt, stride=(strides[1], strides[2]), groups=groups)
    return y.numpy().transpose(0, 2, 3, 1)


def _resize_bilinear_half_pixel(x: np.ndarray, size) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    y = F.interpolate(xt, size=(int(size[0]), int(size[1])), mode="bilinear", align_corners=False)
    return y.numpy().transpose(0, 2, 3, 1)


def _maxpool_valid(x: np.ndarray, ksize, strides) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    y = F.max_pool2d(xt, kernel_size=(ksize[1], ksize[2]), stride=(strides[1], strides[2]))
    return y.numpy().transpose(0, 2, 3, 1)


def run_graph(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Evaluates every node in order (the export lists them topologically enough; a missing input raises)."""
    values: dict[str, np.ndarray] = {}

    def get(ref: str) -> np.ndarray:
        name, _, index = ref.partition(":")
        key = f"{name}:{index}" if index and index != "0" else name
        if key in values:
            return values[key]
        raise KeyError(f"input {ref} is not computed yet")

    pending = list(graph.nodes)
    while pending:
        progressed = False
        rest = []
        for n in pending:
            try:
                args = [get(i) for i in n.inputs if not i.startswith("^")]
            except KeyError:
                rest.append(n)
                continue
            progressed = True
            op = n.op
            if op == "Const":
                values[n.name] = graph.weights[n.name]
            elif op == "Placeholder":
                values[n.name] = feeds[n.name]
            elif op == "Identity":
                values[n.name] = args[0]
            elif op in ("Pad", "PadV2"):
                const = float(args[2]) if op == "PadV2" else 0.0
                values[n.name] = np.pad(args[0], args[1].astype(np.int64), constant_values=const)
            elif op == "Transpose":
                values[n.name] = np.transpose(args[0], args[1])
            elif op == "Conv2D":
                values[n.name] = _conv2d_nhwc(args[0], args[1], n.attr["strides"], n.attr["padding"])
            elif op in ("Add", "AddV2"):
                values[n.name] = args[0] + args[1]
            elif op == "LeakyRelu":
                values[n.name] = _leaky(args[0], n.attr.get("alpha", 0.2))
            elif op == "Sigmoid":
                values[n.name] = 1.0 / (1.0 + np.exp(-args[0]))
            elif op == "MaxPool":
                values[n.name] = _maxpool_valid(args[0], n.attr["ksize"], n.attr["strides"])
            elif op == "ConcatV2":
                values[n.name] = np.concatenate(args[:-1], axis=int(args[-1]))
            elif op == "ResizeBilinear":
                if not n.attr.get("half_pixel_centers") or n.attr.get("align_corners"):
                    raise ValueError(f"{n.name}: only half-pixel-centre bilinear resizing is supported")
                values[n.name] = _resize_bilinear_half_pixel(args[0], args[1])
            elif op == "SplitV":
                sizes, axis = args[1], int(args[2])
                parts = np.split(args[0], np.cumsum(sizes)[:-1], axis=axis)
                values[n.name] = parts[0]
                for k, p in enumerate(parts[1:], 1):
                    values[f"{n.name}:{k}"] = p
            elif op == "Reshape":
                values[n.name] = args[0].reshape([int(s) for s in args[1]])
            elif op == "SparseToDense":
                indices, shape, vals, default = args
                dense = np.full([int(s) for s in shape], default, dtype=np.asarray(default).dtype)
                if indices.size:
                    idx2 = indices.reshape(indices.shape[0], -1)
                    for idx, v in zip(idx2, np.broadcast_to(vals, (idx2.shape[0],))):
                        dense[tuple(idx)] = v
                values[n.name] = dense
            else:
                raise ValueError(f"op {op} ({n.name}) is not supported")
        if not progressed:
            raise ValueError(f"graph cannot be evaluated: {[n.name for n in rest[:5]]} wait on inputs never computed")
        pending = rest
    return {name: values[name] for name in graph.outputs}
