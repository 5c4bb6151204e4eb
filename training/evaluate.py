"""Scores a model on a YOLO dataset the way bench/scoring-accuracy.ts scores photos: detections matched to
labels greedily by IoU (best pairs first, at least 0.5), precision and recall over all boxes, the median over
images of |predicted - labelled| / labelled, and ripeness agreement of matched fruit (the class must agree).

    /usr/bin/python3 training/evaluate.py --model models/x.onnx|run/best.pt --data training/work/tomato/validation [--conf 0.4]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import _load, read_yolo  # noqa: E402
from detect import detect  # noqa: E402


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match(dets, labels, min_iou=0.5):
    pairs = sorted(((iou(d, l), i, j) for i, d in enumerate(dets) for j, l in enumerate(labels)), reverse=True)
    used_d, used_l, out = set(), set(), []
    for v, i, j in pairs:
        if v < min_iou:
            break
        if i in used_d or j in used_l:
            continue
        used_d.add(i)
        used_l.add(j)
        out.append((i, j))
    return out


def predict_all(model, samples, height, width, conf, device="cpu"):
    model.eval()
    return [detect(model, _load(s.image), height, width, conf, device) for s in samples]


def score(samples, predictions, class_names, conf):
    """predictions: per sample, list of (box, score, class index) (any threshold at or below conf)."""
    tp = nd = nl = agree = 0
    errors = []
    per_image = []
    for s, preds in zip(samples, predictions):
        kept = [p for p in preds if p[1] >= conf]
        pairs = match([p[0] for p in kept], s.boxes.tolist())
        tp += len(pairs)
        nd += len(kept)
        nl += len(s.boxes)
        a = sum(1 for i, j in pairs if class_names[kept[i][2]] == s.classes[j])
        agree += a
        err = abs(len(kept) - len(s.boxes)) / len(s.boxes) if len(s.boxes) else float(len(kept) > 0)
        errors.append(err)
        per_image.append({"image": os.path.basename(s.image), "labels": len(s.boxes), "found": len(kept), "matched": len(pairs),
                          "count_error": err})
    return {
        "conf": conf,
        "images": len(samples),
        "precision": tp / nd if nd else 1.0,
        "recall": tp / nl if nl else 1.0,
        "median_count_error": float(np.median(errors)) if errors else 0.0,
        "ripeness_agreement": agree / tp if tp else 1.0,
        "per_image": per_image,
    }


def pick_conf(samples, predictions, class_names, grid=None) -> tuple[float, dict]:
    """The threshold that maximises F1 on these (tuning) images, ties to the lower median count error."""
    grid = grid or [round(x, 2) for x in np.arange(0.15, 0.71, 0.025)]
    best = None
    for c in grid:
        r = score(samples, predictions, class_names, c)
        f1 = 2 * r["precision"] * r["recall"] / max(r["precision"] + r["recall"], 1e-9)
        key = (round(f1, 3), -r["median_count_error"])
        if best is None or key > best[0]:
            best = (key, c, r)
    return best[1], best[2]


def load_any(path: str):
    from checkpoint import load_init, load_onnx_weights

    if path.endswith(".onnx"):
        model, info = load_onnx_weights(path)
    else:
        ck = torch.load(path, map_location="cpu")
        model, info = load_init(path, ck["classes"])
    return model, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--conf", type=float, default=None, help="default: the model's photo threshold")
    ap.add_argument("--size", default=None, help="input H,W (default: the model's)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    model, info = load_any(args.model)
    h, w = (int(v) for v in args.size.split(",")) if args.size else tuple(info.get("input", [416, 736]))
    conf = args.conf if args.conf is not None else info.get("conf", {}).get("photo", 0.4)
    samples = read_yolo(args.data)
    preds = predict_all(model, samples, h, w, min(conf, 0.1))
    r = score(samples, preds, model.class_names, conf)
    if args.json:
        print(json.dumps(r, indent=1))
        return
    for p in r["per_image"]:
        print(f"{p['image']:>12} labels {p['labels']:3d} found {p['found']:3d} matched {p['matched']:3d} count error {p['count_error']:.0%}")
    print(f"{r['images']} images at conf {conf} (input {h}x{w}): precision {r['precision']:.3f} recall {r['recall']:.3f} "
          f"median count error {r['median_count_error']:.1%} ripeness agreement {r['ripeness_agreement']:.1%}")


if __name__ == "__main__":
    main()
