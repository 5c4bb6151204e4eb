"""Writes a trained model as the box reads it (models/README.md): an ONNX file whose output is [1, 4 + C, N]
(cx, cy, w, h in input pixels, then one probability per class: an Ultralytics YOLOv8 export's layout), and a
manifest beside it with the file's SHA-256, input size, classes and score thresholds.

    /usr/bin/python3 training/export.py --model training/work/runs/x/best.pt --out models/cropwalk-tomato-v2 [--input 416,736]

The ONNX file also carries, as metadata (`cropwalk`), its classes, input and training record, and its
initialisers keep the module's parameter names, so training/ can fine-tune it from the file alone.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Detector, Export  # noqa: E402

RIPENESS = {"green": "green", "turning": "turning", "red": "red", "stem": "stem", "plant": "plant"}


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def export(model: Detector, out_base: str, height: int, width: int, info: dict, name: str | None = None) -> str:
    """Writes out_base.onnx and out_base.json; returns the manifest's path."""
    import onnx

    if height % 32 or width % 32:
        raise ValueError(f"input {height}x{width}: both sides must be multiples of 32")
    model = model.cpu().eval()
    wrapper = Export(model, height, width).eval()
    onnx_path = out_base + ".onnx"
    os.makedirs(os.path.dirname(os.path.abspath(onnx_path)) or ".", exist_ok=True)
    tmp = onnx_path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            torch.zeros(1, 3, height, width),
            tmp,
            input_names=["images"],
            output_names=["output0"],
            opset_version=13,
            do_constant_folding=True,
        )
    proto = onnx.load(tmp)
    name = name or os.path.basename(out_base)
    meta = dict(info)
    meta.update({"name": name, "classes": model.class_names, "input": [height, width]})
    entry = proto.metadata_props.add()
    entry.key = "cropwalk"
    entry.value = json.dumps(meta)
    onnx.checker.check_model(proto)
    onnx.save(proto, tmp)
    os.replace(tmp, onnx_path)
    manifest = {
        "name": name,
        "file": os.path.basename(onnx_path),
        "sha256": sha256(onnx_path),
        "input": {"width": width, "height": height},
        "classes": [{"name": c, "maps_to": RIPENESS.get(c, "red" if c == "fruit" else "ignore")} for c in model.class_names],
    }
    if "conf" in info:
        manifest["conf"] = info["conf"]
    manifest["created"] = info.get("created") or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if "trained" in info:
        manifest["trained"] = info["trained"]
    manifest_path = out_base + ".json"
    write_manifest(manifest_path, manifest)
    return manifest_path


def write_manifest(path: str, manifest: dict) -> None:
    """Writes a manifest whole or not at all (a box reading it at start never sees half of one)."""
    with open(path + ".tmp", "w", encoding="utf8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a training checkpoint (.pt)")
    ap.add_argument("--out", required=True, help="path without extension: writes .onnx and .json")
    ap.add_argument("--input", default=None, help="H,W (multiples of 32; default: the checkpoint's)")
    ap.add_argument("--name", default=None)
    ap.add_argument("--photo-conf", type=float, default=None, help="the photo threshold to write (default: the checkpoint's)")
    ap.add_argument("--video-conf", type=float, default=None, help="the video threshold to write, e.g. chosen on tuning walks")
    args = ap.parse_args()
    ck = torch.load(args.model, map_location="cpu")
    model = Detector(ck["classes"])
    model.load_state_dict(ck["state"])
    info = dict(ck.get("info", {}))
    conf = dict(info.get("conf") or {"photo": 0.4, "video": 0.4})
    if args.photo_conf is not None:
        conf["photo"] = args.photo_conf
    if args.video_conf is not None:
        conf["video"] = args.video_conf
    info["conf"] = conf
    h, w = (int(v) for v in args.input.split(",")) if args.input else tuple(info.get("input", [416, 736]))
    print(export(model, args.out, h, w, info, args.name))


if __name__ == "__main__":
    main()
