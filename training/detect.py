"""Inference in PyTorch as the box does it (src/vision/onnx): letterbox into the input, each cell's best class,
threshold, non-maximum suppression, boxes back in image pixels. Fruit classes suppress one another (one fruit
is one fruit whatever its ripeness), as src/vision/onnx/decode.ts does."""
from __future__ import annotations

import numpy as np
import torch

from data import letterbox
from loss import box_iou
from model import decode, normalise, points

NMS_IOU = 0.45


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou: float = NMS_IOU, limit: int = 300) -> list[int]:
    order = scores.argsort(descending=True)
    keep: list[int] = []
    if order.numel() == 0:
        return keep
    ious = box_iou(boxes[order], boxes[order])
    removed = torch.zeros(order.numel(), dtype=torch.bool)
    for i in range(order.numel()):
        if removed[i]:
            continue
        keep.append(int(order[i]))
        if len(keep) >= limit:
            break
        removed |= ious[i] > iou
    return keep


@torch.no_grad()
def detect(model, image: np.ndarray, height: int, width: int, conf: float, device="cpu"):
    """image HxWx3 0..1 -> list of (box [x1,y1,x2,y2] image px, score, class index)."""
    lb, scale, px, py = letterbox(image, height, width)
    x = torch.from_numpy(np.ascontiguousarray(lb.transpose(2, 0, 1)))[None].to(device)
    logits, sides = model(normalise(x))
    c, s = points(height, width, device)
    boxes = decode(sides, c, s)[0]
    probs = logits[0].sigmoid()
    score, cls = probs.max(0)
    mask = score >= conf
    boxes, score, cls = boxes[mask].cpu(), score[mask].cpu(), cls[mask].cpu()
    keep = nms(boxes, score, NMS_IOU)
    out = []
    h, w = image.shape[:2]
    for k in keep:
        b = boxes[k].tolist()
        x1 = min(w, max(0.0, (b[0] - px) / scale))
        y1 = min(h, max(0.0, (b[1] - py) / scale))
        x2 = min(w, max(0.0, (b[2] - px) / scale))
        y2 = min(h, max(0.0, (b[3] - py) / scale))
        if x2 > x1 and y2 > y1:
            out.append(([x1, y1, x2, y2], float(score[k]), int(cls[k])))
    return out
