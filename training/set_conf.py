"""Sets a shipped model's score thresholds without training it again: the `conf` in its ONNX metadata
(`cropwalk`, which a fine-tune from the file inherits) and in its manifest, and the manifest's SHA-256 of
the rewritten file. The graph and its weights are left byte for byte as they were (checked).

    /usr/bin/python3 training/set_conf.py --manifest models/cropwalk-tomato.json --video 0.31 [--photo 0.32]

How the shipped model's thresholds were chosen: training/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import sha256, write_manifest  # noqa: E402


def set_conf(manifest_path: str, photo: float | None = None, video: float | None = None) -> dict:
    """Rewrites the model a manifest names and the manifest; answers the new conf."""
    import onnx

    with open(manifest_path, encoding="utf8") as f:
        manifest = json.load(f)
    onnx_path = os.path.join(os.path.dirname(os.path.abspath(manifest_path)), manifest["file"])
    if sha256(onnx_path) != manifest["sha256"]:
        raise ValueError(f"{onnx_path} does not match its manifest's sha256: not the model it names")
    model = onnx.load(onnx_path)
    graph = model.graph.SerializeToString()
    entries = [p for p in model.metadata_props if p.key == "cropwalk"]
    if len(entries) != 1:
        raise ValueError(f"{onnx_path} has no cropwalk metadata: not made by training/export.py")
    meta = json.loads(entries[0].value)
    conf = dict(meta.get("conf") or manifest.get("conf") or {"photo": 0.4, "video": 0.4})
    for key, value in (("photo", photo), ("video", video)):
        if value is not None:
            if not 0 < value < 1:
                raise ValueError(f"{key} threshold {value}: must be between 0 and 1")
            conf[key] = value
    meta["conf"] = conf
    entries[0].value = json.dumps(meta)
    onnx.checker.check_model(model)
    tmp = onnx_path + ".tmp"
    onnx.save(model, tmp)
    if onnx.load(tmp).graph.SerializeToString() != graph:
        os.remove(tmp)
        raise RuntimeError("the graph changed on saving: left as it was")
    os.replace(tmp, onnx_path)
    manifest["conf"] = conf
    manifest["sha256"] = sha256(onnx_path)
    write_manifest(manifest_path, manifest)
    return conf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True, help="the model's manifest (models/x.json)")
    ap.add_argument("--photo", type=float, default=None, help="the photo threshold to write")
    ap.add_argument("--video", type=float, default=None, help="the video threshold to write")
    args = ap.parse_args()
    if args.photo is None and args.video is None:
        ap.error("give --photo, --video or both")
    print(json.dumps(set_conf(args.manifest, args.photo, args.video)))


if __name__ == "__main__":
    main()
