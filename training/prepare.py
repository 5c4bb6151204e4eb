"""Turns the labelled tomato photos (../shared/data/tomato-photos: NNNN.jpg + NNNN.json) into YOLO datasets,
one per part of the fixed split in splits/tomato-photos.json:

    /usr/bin/python3 training/prepare.py [--shared ../shared] [--out training/work/tomato]

writes <out>/{train,tune,validation}/{images,labels,classes.txt}. Classes: green, turning, red (the photos
label only green and red). The shared folder is CROPWALK_SHARED when set, else ../shared beside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CLASSES = ["green", "turning", "red"]


def shared_dir() -> str:
    return os.environ.get("CROPWALK_SHARED") or os.path.join(os.path.dirname(REPO), "shared")


def load_split() -> dict:
    return json.load(open(os.path.join(HERE, "splits", "tomato-photos.json"), encoding="utf8"))


def write_yolo(photos_dir: str, names: list[str], out: str) -> int:
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    os.makedirs(os.path.join(out, "labels"), exist_ok=True)
    with open(os.path.join(out, "classes.txt"), "w", encoding="utf8") as f:
        f.write("\n".join(CLASSES) + "\n")
    boxes = 0
    for name in names:
        doc = json.load(open(os.path.join(photos_dir, f"{name}.json"), encoding="utf8"))
        w, h = doc["width"], doc["height"]
        shutil.copyfile(os.path.join(photos_dir, f"{name}.jpg"), os.path.join(out, "images", f"{name}.jpg"))
        lines = []
        for fr in doc["fruit"]:
            x1, y1, x2, y2 = fr["box"]
            lines.append(f"{CLASSES.index(fr['ripeness'])} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}")
        boxes += len(lines)
        with open(os.path.join(out, "labels", f"{name}.txt"), "w", encoding="utf8") as f:
            f.write("\n".join(lines) + ("\n" if lines else ""))
    return boxes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=shared_dir())
    ap.add_argument("--out", default=os.path.join(HERE, "work", "tomato"))
    args = ap.parse_args()
    photos = os.path.join(args.shared, "data", "tomato-photos")
    if not os.path.isdir(photos):
        raise SystemExit(f"labelled photos not found at {photos} (set CROPWALK_SHARED or --shared)")
    split = load_split()
    for part in ("train", "tune", "validation"):
        n = write_yolo(photos, split[part], os.path.join(args.out, part))
        print(f"{part}: {len(split[part])} photos, {n} fruit -> {os.path.join(args.out, part)}")


if __name__ == "__main__":
    main()
