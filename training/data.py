"""Datasets in YOLO format and the augmentations that matter for greenhouse rows.

A YOLO dataset folder holds `images/` and `labels/` (one `name.txt` per image: `class cx cy w h`,
normalised to the image; no file, or an empty one, means no objects) and names its classes in
`classes.txt` (one per line, in index order), `data.yaml` (`names:` list) or `index.json`
(`classes`). A folder with no class names is read as one class, `fruit` (fruit-pretrain/).
Images are found recursively under `images/`, labels at the same relative path under `labels/`.
"""
from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image, ImageFilter

IMAGE_EXT = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
GREY = 114  # letterbox padding, as src/vision/onnx/letterbox.ts pads


@dataclass
class Sample:
    image: str
    boxes: np.ndarray  # [n, 4] x1, y1, x2, y2 in pixels
    classes: list[str]  # class name per box
    group: str  # what it was cut from (photo, source image, walk): splits keep a group together


def read_class_names(root: str) -> list[str] | None:
    txt = os.path.join(root, "classes.txt")
    if os.path.exists(txt):
        return [line.strip() for line in open(txt, encoding="utf8") if line.strip()]
    index = os.path.join(root, "index.json")
    if os.path.exists(index):
        doc = json.load(open(index, encoding="utf8"))
        if isinstance(doc.get("classes"), list):
            return [str(c) for c in doc["classes"]]
    yaml = os.path.join(root, "data.yaml")
    if os.path.exists(yaml):
        text = open(yaml, encoding="utf8").read()
        m = re.search(r"^names:\s*\[(.*?)\]", text, re.M | re.S)
        if m:
            return [n.strip().strip("'\"") for n in m.group(1).split(",") if n.strip()]
        m = re.search(r"^names:\s*\n((?:\s+.+\n?)+)", text, re.M)
        if m:
            names = []
            for line in m.group(1).splitlines():
                line = line.strip()
                if not line:
                    continue
                line = re.sub(r"^-\s*", "", line)
                line = re.sub(r"^\d+\s*:\s*", "", line)
                names.append(line.strip("'\""))
            return names
    return None


def image_size(path: str) -> tuple[int, int]:
    with Image.open(path) as im:
        return im.size


def open_dataset(path: str) -> str:
    """A dataset folder, or a zip of one (the box's training export) unpacked once into `<zip>.d/` beside it.
    Entries are confined to that folder."""
    if not path.lower().endswith(".zip"):
        return path
    import zipfile

    out = path + ".d"
    if os.path.isdir(out) and os.path.getmtime(out) >= os.path.getmtime(path):
        return out
    tmp = out + ".tmp"
    if os.path.isdir(tmp):
        import shutil

        shutil.rmtree(tmp)
    os.makedirs(tmp)
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            target = os.path.realpath(os.path.join(tmp, info.filename))
            if not target.startswith(os.path.realpath(tmp) + os.sep):
                raise ValueError(f"{path}: entry {info.filename!r} would be written outside the dataset folder")
        z.extractall(tmp)
    if os.path.isdir(out):
        import shutil

        shutil.rmtree(out)
    os.replace(tmp, out)
    return out


def read_yolo(root: str, group_of=None) -> list[Sample]:
    """Every image under root/images with its boxes. group_of(relative name) names its group (default: the file stem)."""
    root = open_dataset(root)
    names = read_class_names(root) or ["fruit"]
    image_dir = os.path.join(root, "images")
    if not os.path.isdir(image_dir):
        raise FileNotFoundError(f"{root}: no images/ folder (a YOLO dataset has images/ and labels/)")
    out = []
    for folder, _, files in sorted(os.walk(image_dir)):
        for f in sorted(files):
            if not f.lower().endswith(IMAGE_EXT):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, image_dir)
            label = os.path.join(root, "labels", os.path.splitext(rel)[0] + ".txt")
            boxes, classes = [], []
            if os.path.exists(label):
                w, h = image_size(path)
                for n, line in enumerate(open(label, encoding="utf8"), 1):
                    parts = line.split()
                    if not parts:
                        continue
                    if len(parts) != 5:
                        raise ValueError(f"{label}:{n}: expected 'class cx cy w h', got {line.strip()!r}")
                    c = int(parts[0])
                    if not 0 <= c < len(names):
                        raise ValueError(f"{label}:{n}: class {c} is not one of the {len(names)} named classes")
                    cx, cy, bw, bh = (float(v) for v in parts[1:])
                    x1, y1, x2, y2 = (cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h
                    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
                    if x2 - x1 < 1 or y2 - y1 < 1:
                        continue
                    boxes.append([x1, y1, x2, y2])
                    classes.append(names[c])
            stem = os.path.splitext(rel)[0]
            out.append(
                Sample(path, np.array(boxes, dtype=np.float32).reshape(-1, 4), classes, group_of(stem) if group_of else stem)
            )
    return out


# ----------------------------------------------------------------------------------------------
# Augmentation. Everything works on a float32 HxWx3 array in 0..1 and boxes in its pixels.


@dataclass
class Augment:
    """What a training tile goes through. Defaults are for rows: fruit from about 10 to 160 px, greenhouse light."""

    size: tuple[int, int] = (416, 416)  # tile height, width
    fruit_px: tuple[float, float] = (14.0, 160.0)  # median fruit size after scaling, drawn log-uniformly
    light: float = 0.35  # brightness factor range: 1 ± light
    white_balance: float = 0.12  # per-channel gain range: 1 ± white_balance (ripeness lives in colour: kept small)
    blur: float = 0.4  # chance of a Gaussian or horizontal motion blur
    occlusion: float = 0.5  # chance of pasting leaf-like patches over the tile
    flip: bool = True
    keep_visible: float = 0.45  # a box cut by the tile's edge or hidden by a patch is kept while this much of it shows


class _ImageCache:
    """Decoded images kept in memory (as PIL images) up to a byte budget: a training run reads the same few
    large photos thousands of times, and decoding a 1600-px JPEG costs more than the tile it gives."""

    def __init__(self, budget: int = 1 << 30):
        self.budget, self.used, self.items = budget, 0, {}

    def get(self, path: str) -> Image.Image:
        im = self.items.get(path)
        if im is None:
            with Image.open(path) as f:
                im = f.convert("RGB")
            size = im.width * im.height * 3
            if self.used + size <= self.budget:
                self.items[path] = im
                self.used += size
        return im


_CACHE = _ImageCache()


def _load(path: str) -> np.ndarray:
    return np.asarray(_CACHE.get(path), dtype=np.float32) / 255.0


def _resize(img: np.ndarray, scale: float) -> np.ndarray:
    h, w = img.shape[:2]
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    pil = Image.fromarray((img * 255).astype(np.uint8))
    return np.asarray(pil.resize((nw, nh), Image.BILINEAR), dtype=np.float32) / 255.0


def _area(b: np.ndarray) -> np.ndarray:
    return np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)


def random_tile(im: Image.Image, boxes: np.ndarray, classes: list[str], aug: Augment, rng: random.Random):
    """Scale so the median fruit is drawn from aug.fruit_px, then cut a tile (padded grey where the image ends).
    Only the region the tile covers is resized."""
    th, tw = aug.size
    W, H = im.size
    if len(boxes):
        median = float(np.median(np.sqrt(_area(boxes))))
        lo, hi = aug.fruit_px
        want = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        scale = want / max(median, 1.0)
    else:
        scale = rng.uniform(0.3, 1.2) * min(th, tw) / min(W, H)
    scale = min(scale, 3.0)
    w, h = W * scale, H * scale
    boxes = boxes * scale
    # Centre the tile on a random box half the time, so tiles of a big photo mostly hold fruit.
    if len(boxes) and rng.random() < 0.5:
        b = boxes[rng.randrange(len(boxes))]
        cx, cy = (b[0] + b[2]) / 2 + rng.uniform(-tw / 3, tw / 3), (b[1] + b[3]) / 2 + rng.uniform(-th / 3, th / 3)
        x0, y0 = int(round(cx - tw / 2)), int(round(cy - th / 2))
    else:
        x0 = rng.randint(int(min(0, w - tw)), int(max(0, w - tw)))
        y0 = rng.randint(int(min(0, h - th)), int(max(0, h - th)))
    tile = np.full((th, tw, 3), GREY / 255.0, dtype=np.float32)
    dx0, dy0 = max(0, x0), max(0, y0)
    dx1, dy1 = min(int(math.floor(w)), x0 + tw), min(int(math.floor(h)), y0 + th)
    if dx1 > dx0 and dy1 > dy0:
        region = im.resize((dx1 - dx0, dy1 - dy0), Image.BILINEAR, box=(dx0 / scale, dy0 / scale, dx1 / scale, dy1 / scale))
        tile[dy0 - y0 : dy1 - y0, dx0 - x0 : dx1 - x0] = np.asarray(region, dtype=np.float32) / 255.0
    moved = boxes - np.array([x0, y0, x0, y0], dtype=np.float32)
    if not len(moved):
        return tile, moved.reshape(0, 4), []
    clipped = np.stack(
        [np.clip(moved[:, 0], 0, tw), np.clip(moved[:, 1], 0, th), np.clip(moved[:, 2], 0, tw), np.clip(moved[:, 3], 0, th)], 1
    )
    keep = _area(clipped) >= aug.keep_visible * np.maximum(_area(moved), 1e-6)
    keep &= (clipped[:, 2] - clipped[:, 0] >= 3) & (clipped[:, 3] - clipped[:, 1] >= 3)
    return tile, clipped[keep], [c for c, k in zip(classes, keep) if k]


def light_and_white_balance(tile: np.ndarray, aug: Augment, rng: random.Random) -> np.ndarray:
    gains = np.array([1 + rng.uniform(-aug.white_balance, aug.white_balance) for _ in range(3)], dtype=np.float32)
    bright = 1 + rng.uniform(-aug.light, aug.light)
    gamma = math.exp(rng.uniform(-0.3, 0.3))
    contrast = 1 + rng.uniform(-0.25, 0.25)
    x = np.clip(tile * gains * bright, 0, 1) ** gamma
    mean = x.mean()
    return np.clip((x - mean) * contrast + mean, 0, 1)


def blur(tile: np.ndarray, rng: random.Random) -> np.ndarray:
    if rng.random() < 0.5:
        pil = Image.fromarray((tile * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 2.2)))
        return np.asarray(pil, dtype=np.float32) / 255.0
    # Motion blur along the row: the walker moves sideways past the plants.
    n = rng.choice([3, 5, 7, 9, 11])
    k = np.ones(n, dtype=np.float32) / n
    pad = np.pad(tile, ((0, 0), (n // 2, n // 2), (0, 0)), mode="edge")
    out = np.zeros_like(tile)
    for i in range(n):
        out += k[i] * pad[:, i : i + tile.shape[1]]
    return out


def occlude(tile: np.ndarray, boxes: np.ndarray, classes: list[str], aug: Augment, rng: random.Random):
    """Pastes leaf-like ellipses (a patch of the tile itself, or flat leaf greens with texture) over random places,
    half of them over a fruit; a fruit hidden beyond aug.keep_visible is dropped."""
    th, tw = tile.shape[:2]
    hidden = np.zeros((th, tw), dtype=bool)
    for _ in range(rng.randint(1, 4)):
        if len(boxes) and rng.random() < 0.6:
            b = boxes[rng.randrange(len(boxes))]
            bw, bh = b[2] - b[0], b[3] - b[1]
            rx, ry = rng.uniform(0.25, 0.7) * bw, rng.uniform(0.25, 0.7) * bh
            cx, cy = rng.uniform(b[0], b[2]), rng.uniform(b[1], b[3])
        else:
            rx, ry = rng.uniform(0.03, 0.15) * tw, rng.uniform(0.03, 0.15) * th
            cx, cy = rng.uniform(0, tw), rng.uniform(0, th)
        x0, x1 = int(max(0, cx - rx)), int(min(tw, cx + rx + 1))
        y0, y1 = int(max(0, cy - ry)), int(min(th, cy + ry + 1))
        if x1 <= x0 or y1 <= y0:
            continue
        yy, xx = np.mgrid[y0:y1, x0:x1]
        ang = rng.uniform(0, math.pi)
        dx, dy = xx - cx, yy - cy
        u, v = dx * math.cos(ang) + dy * math.sin(ang), -dx * math.sin(ang) + dy * math.cos(ang)
        mask = (u / max(rx, 1)) ** 2 + (v / max(ry, 1)) ** 2 <= 1
        source = None
        if rng.random() < 0.5:
            # A patch of the tile from elsewhere, away from every labelled fruit: real leaves and stems at the
            # tile's own light (a patch holding a fruit would paste an unlabelled one).
            for _ in range(6):
                sx = rng.randint(0, max(0, tw - (x1 - x0)))
                sy = rng.randint(0, max(0, th - (y1 - y0)))
                r = np.array([sx, sy, sx + (x1 - x0), sy + (y1 - y0)], dtype=np.float32)
                if not len(boxes) or not np.any(
                    (boxes[:, 0] < r[2]) & (boxes[:, 2] > r[0]) & (boxes[:, 1] < r[3]) & (boxes[:, 3] > r[1])
                ):
                    source = tile[sy : sy + (y1 - y0), sx : sx + (x1 - x0)].copy()
                    break
        if source is not None:
            patch = source
        else:
            base = np.array([rng.uniform(0.1, 0.35), rng.uniform(0.3, 0.6), rng.uniform(0.05, 0.25)], dtype=np.float32)
            noise = np.random.default_rng(rng.randrange(2**32)).normal(0, 0.04, (y1 - y0, x1 - x0, 1)).astype(np.float32)
            patch = np.clip(base + noise + 0.08 * (u / max(rx, 1))[..., None], 0, 1).astype(np.float32)
        region = tile[y0:y1, x0:x1]
        region[mask] = patch[mask]
        hidden[y0:y1, x0:x1] |= mask
    if not len(boxes):
        return tile, boxes, classes
    keep = []
    for b in boxes:
        xa, ya, xb, yb = int(b[0]), int(b[1]), int(math.ceil(b[2])), int(math.ceil(b[3]))
        seen = 1.0 - hidden[ya:yb, xa:xb].mean() if yb > ya and xb > xa else 0.0
        keep.append(seen >= aug.keep_visible)
    keep = np.array(keep)
    return tile, boxes[keep], [c for c, k in zip(classes, keep) if k]


def augment(sample: Sample, aug: Augment, rng: random.Random):
    tile, boxes, classes = random_tile(_CACHE.get(sample.image), sample.boxes, sample.classes, aug, rng)
    if aug.flip and rng.random() < 0.5:
        tile = tile[:, ::-1].copy()
        if len(boxes):
            boxes = np.stack([tile.shape[1] - boxes[:, 2], boxes[:, 1], tile.shape[1] - boxes[:, 0], boxes[:, 3]], 1)
    tile = light_and_white_balance(tile, aug, rng)
    if rng.random() < aug.occlusion:
        tile, boxes, classes = occlude(tile, boxes, classes, aug, rng)
    if rng.random() < aug.blur:
        tile = blur(tile, rng)
    return tile.astype(np.float32), boxes.astype(np.float32).reshape(-1, 4), classes


def letterbox(img: np.ndarray, height: int, width: int):
    """Aspect kept, centred, grey padding: as src/vision/onnx/letterbox.ts. Returns image, scale, pad x, pad y."""
    h, w = img.shape[:2]
    scale = min(width / w, height / h)
    nw, nh = round(w * scale), round(h * scale)
    resized = _resize(img, scale) if (nw, nh) != (w, h) else img
    out = np.full((height, width, 3), GREY / 255.0, dtype=np.float32)
    px, py = (width - resized.shape[1]) // 2, (height - resized.shape[0]) // 2
    out[py : py + resized.shape[0], px : px + resized.shape[1]] = resized
    return out, scale, px, py


class TrainSet(torch.utils.data.Dataset):
    """Augmented tiles from several sources, each drawn with its weight; `length` tiles make an epoch."""

    def __init__(self, sources: list[tuple[list[Sample], float]], class_names: list[str], aug: Augment, length: int, seed: int = 0,
                 class_map: dict[str, str] | None = None):
        self.sources = [(s, w) for s, w in sources if s]
        self.class_names = class_names
        self.class_map = class_map or {}
        self.aug = aug
        self.length = length
        self.seed = seed
        self.epoch = 0
        total = sum(w for _, w in self.sources)
        self.cum = np.cumsum([w / total for _, w in self.sources])

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        rng = random.Random((self.seed * 1_000_003 + self.epoch) * 10_000_019 + i)
        k = int(np.searchsorted(self.cum, rng.random(), side="right"))
        samples = self.sources[min(k, len(self.sources) - 1)][0]
        sample = samples[rng.randrange(len(samples))]
        tile, boxes, classes = augment(sample, self.aug, rng)
        labels = []
        for c in classes:
            name = self.class_map.get(c, c)
            if name not in self.class_names:
                raise ValueError(f"{sample.image}: class {c!r} maps to none of the model's classes {self.class_names}")
            labels.append(self.class_names.index(name))
        return (
            torch.from_numpy(np.ascontiguousarray(tile.transpose(2, 0, 1))),
            torch.from_numpy(boxes),
            torch.tensor(labels, dtype=torch.long),
        )


def collate(batch):
    images = torch.stack([b[0] for b in batch])
    targets = [(b[1], b[2]) for b in batch]
    return images, targets
