"""Where a model's weights come from, and where they go: the ported COCO weights (port.py), a training
checkpoint (.pt), or a shipped ONNX model (its initialisers carry the module's parameter names, so a model
in models/ can be fine-tuned without any other file)."""
from __future__ import annotations

import json
import os

import numpy as np
import torch

from model import Detector
from port import adapt, port


def load_onnx_weights(path: str) -> tuple[Detector, dict]:
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(path)
    meta = {p.key: p.value for p in proto.metadata_props}
    if "cropwalk" not in meta:
        raise ValueError(f"{path}: not written by training/export.py (no cropwalk metadata), so its weights cannot be read back")
    info = json.loads(meta["cropwalk"])
    model = Detector(info["classes"])
    state = model.state_dict()
    found = {}
    for init in proto.graph.initializer:
        name = init.name[len("model."):] if init.name.startswith("model.") else init.name
        if name in state:
            found[name] = torch.from_numpy(np.array(numpy_helper.to_array(init)))
    missing = [k for k in state if k not in found]
    if missing:
        raise ValueError(f"{path}: {len(missing)} parameters not found among its initialisers, e.g. {missing[:3]}")
    model.load_state_dict(found)
    return model, info


def load_init(init: str, classes: list[str], graph: str | None = None) -> tuple[Detector, dict]:
    """A model for `classes` from: 'nanodet' (port from the TF.js graph), a .pt checkpoint, or an exported .onnx.
    Classes the source lacks start from its 'fruit' row when it has one (pretraining's class), else from
    COCO's apple and orange."""
    if init == "nanodet" or init.endswith(".json"):
        from port import DEFAULT_GRAPH

        coco = port(graph or (init if init.endswith(".json") else DEFAULT_GRAPH))
        return adapt(coco, classes, {}), {"init": "nanodet-coco"}
    if init.endswith(".onnx"):
        source, info = load_onnx_weights(init)
    else:
        ck = torch.load(init, map_location="cpu")
        source = Detector(ck["classes"])
        source.load_state_dict(ck["state"])
        info = ck.get("info", {})
    if source.class_names == list(classes):
        return source, info
    model = Detector(classes)
    state = {k: v for k, v in source.state_dict().items() if not k.startswith("head.outs.")}
    model.load_state_dict(state, strict=False)
    nc_src = len(source.class_names)
    with torch.no_grad():
        for src, dst in zip(source.head.outs, model.head.outs):
            nc = len(classes)
            dst.weight[nc:] = src.weight[nc_src:]
            dst.bias[nc:] = src.bias[nc_src:]
            for k, name in enumerate(classes):
                if name in source.class_names:
                    j = source.class_names.index(name)
                elif "fruit" in source.class_names:
                    j = source.class_names.index("fruit")
                else:
                    j = None
                if j is None:
                    dst.weight[k] = src.weight[:nc_src].mean(0)
                    dst.bias[k] = src.bias[:nc_src].mean(0)
                else:
                    dst.weight[k] = src.weight[j]
                    dst.bias[k] = src.bias[j]
    return model, info


def save(path: str, model: Detector, info: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"classes": model.class_names, "state": model.state_dict(), "info": info}, tmp)
    os.replace(tmp, path)
