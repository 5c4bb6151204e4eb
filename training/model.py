"""The detector: NanoDet's CSP backbone and PAN (ported from the TF.js graph, see port.py) with a
one-stage, anchor-free head whose boxes are learnt as distributions (Generalised Focal Loss).

Layout (input H x W, both multiples of 32):
  stem      3x3/2 conv 3->32, 3x3/2 max pool                                 -> stride 4
  stage 1-4 cross-stage-partial stages (entry conv, n half-width pairs, exit conv, concat)
            giving 64 @4, 128 @8, 256 @16, 512 @32 channels
  PAN       1x1 laterals to 128 on strides 8/16/32, top-down upsample+add, bottom-up resize+add
  head      per level: 3x3 conv 128->128 + LeakyReLU, 1x1 conv -> classes + 4 x (reg_max + 1)

Every conv carries a bias (the export folded batch norm into it); activations are LeakyReLU(0.1).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

STRIDES = (8, 16, 32)
REG_MAX = 10  # the ported head's 44 regression channels are 4 sides x 11 bins
HEAD_CHANNELS = 128


def conv(cin: int, cout: int, k: int = 3, s: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k, s, padding=k // 2, bias=True)


class Act(nn.Module):
    def forward(self, x):  # noqa: D401
        return F.leaky_relu(x, 0.1)


class CspStage(nn.Module):
    """entry conv (stride s) -> a; pairs: b = conv(prev) at half width, c = conv(b), prev = cat(c, b); e = conv(prev); out = cat(e, a)."""

    def __init__(self, cin: int, width: int, pairs: int, stride: int):
        super().__init__()
        self.entry = conv(cin, width, 3, stride)
        self.pairs = nn.ModuleList()
        prev = width
        for _ in range(pairs):
            self.pairs.append(nn.ModuleList([conv(prev, width // 2), conv(width // 2, width // 2)]))
            prev = width
        self.exit = conv(width, width)
        self.act = Act()

    def forward(self, x):
        a = self.act(self.entry(x))
        prev = a
        for first, second in self.pairs:
            b = self.act(first(prev))
            c = self.act(second(b))
            prev = torch.cat([c, b], 1)
        e = self.act(self.exit(prev))
        return torch.cat([e, a], 1)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv(3, 32, 3, 2)
        self.act = Act()
        self.stage1 = CspStage(32, 32, 1, 1)
        self.stage2 = CspStage(64, 64, 2, 2)
        self.stage3 = CspStage(128, 128, 2, 2)
        self.stage4 = CspStage(256, 256, 3, 2)

    def forward(self, x):
        x = self.act(self.stem(x))
        x = F.max_pool2d(F.pad(x, (1, 1, 1, 1), value=float("-inf")), 3, 2)
        x = self.stage1(x)
        c3 = self.stage2(x)
        c4 = self.stage3(c3)
        c5 = self.stage4(c4)
        return c3, c4, c5


class Pan(nn.Module):
    def __init__(self, channels=(128, 256, 512), out: int = HEAD_CHANNELS):
        super().__init__()
        self.lateral = nn.ModuleList([conv(c, out, 1) for c in channels])

    def forward(self, feats):
        l3, l4, l5 = (lat(f) for lat, f in zip(self.lateral, feats))
        p4 = l4 + F.interpolate(l5, size=l4.shape[-2:], mode="bilinear", align_corners=False)
        p3 = l3 + F.interpolate(p4, size=l3.shape[-2:], mode="bilinear", align_corners=False)
        n4 = p4 + F.interpolate(p3, size=p4.shape[-2:], mode="bilinear", align_corners=False)
        n5 = l5 + F.interpolate(n4, size=l5.shape[-2:], mode="bilinear", align_corners=False)
        return p3, n4, n5


class Head(nn.Module):
    def __init__(self, classes: int, levels: int = len(STRIDES)):
        super().__init__()
        self.classes = classes
        self.convs = nn.ModuleList([conv(HEAD_CHANNELS, HEAD_CHANNELS) for _ in range(levels)])
        self.outs = nn.ModuleList([conv(HEAD_CHANNELS, classes + 4 * (REG_MAX + 1), 1) for _ in range(levels)])
        self.act = Act()

    def forward(self, feats):
        """Per level: class logits [B, C, H*W] and side distributions' logits [B, 4*(REG_MAX+1), H*W]."""
        out = []
        for f, c, o in zip(feats, self.convs, self.outs):
            y = o(self.act(c(f)))
            y = y.flatten(2)
            out.append((y[:, : self.classes], y[:, self.classes :]))
        return out


class Detector(nn.Module):
    def __init__(self, classes: list[str]):
        super().__init__()
        self.class_names = list(classes)
        self.backbone = Backbone()
        self.neck = Pan()
        self.head = Head(len(classes))

    def forward(self, x):
        """Raw head output, concatenated over levels: logits [B, C, N], side logits [B, 4*(REG_MAX+1), N]."""
        per_level = self.head(self.neck(self.backbone(x)))
        return torch.cat([p[0] for p in per_level], 2), torch.cat([p[1] for p in per_level], 2)


def points(height: int, width: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Centres (x, y) of every head cell, in input pixels, [N, 2], and each cell's stride [N], levels in order."""
    centres, strides = [], []
    for s in STRIDES:
        h, w = (height + s - 1) // s, (width + s - 1) // s
        ys, xs = torch.meshgrid(torch.arange(h, device=device), torch.arange(w, device=device), indexing="ij")
        c = torch.stack([xs.flatten(), ys.flatten()], 1).float().add(0.5).mul(s)
        centres.append(c)
        strides.append(torch.full((h * w,), float(s), device=device))
    return torch.cat(centres), torch.cat(strides)


def side_distances(side_logits: torch.Tensor) -> torch.Tensor:
    """Expected distance of each side in strides: [B, 4*(REG_MAX+1), N] -> [B, 4, N]."""
    b, _, n = side_logits.shape
    p = side_logits.view(b, 4, REG_MAX + 1, n).softmax(2)
    bins = torch.arange(REG_MAX + 1, dtype=p.dtype, device=p.device).view(1, 1, -1, 1)
    return (p * bins).sum(2)


def decode(side_logits: torch.Tensor, centres: torch.Tensor, strides: torch.Tensor) -> torch.Tensor:
    """Boxes x1, y1, x2, y2 in input pixels, [B, N, 4]."""
    d = side_distances(side_logits) * strides.view(1, 1, -1)
    cx, cy = centres[:, 0].view(1, -1), centres[:, 1].view(1, -1)
    return torch.stack([cx - d[:, 0], cy - d[:, 1], cx + d[:, 2], cy + d[:, 3]], 2)


class Export(nn.Module):
    """What the ONNX file holds: image [1, 3, H, W] RGB 0..1 -> [1, 4 + C, N] rows cx, cy, w, h (input pixels) then class
    probabilities, the layout of an Ultralytics YOLOv8 export (src/vision/onnx/decode.ts reads it)."""

    def __init__(self, model: Detector, height: int, width: int):
        super().__init__()
        self.model = model
        c, s = points(height, width)
        self.register_buffer("centres", c)
        self.register_buffer("strides", s)

    def forward(self, image):
        logits, sides = self.model(normalise(image))
        boxes = decode(sides, self.centres, self.strides)[0]  # [N, 4]
        xywh = torch.stack(
            [(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2, boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]], 0
        )
        return torch.cat([xywh, logits[0].sigmoid()], 0).unsqueeze(0)


# NanoDet was trained on BGR 0..255 images normalised with these (per channel, B, G, R).
_MEAN_BGR = (103.53, 116.28, 123.675)
_STD_BGR = (57.375, 57.12, 58.395)


def normalise(image: torch.Tensor) -> torch.Tensor:
    """RGB 0..1 [B, 3, H, W] -> what the ported weights expect: BGR, 0..255, mean/std normalised."""
    bgr = image.flip(1) * 255.0
    mean = torch.tensor(_MEAN_BGR, dtype=image.dtype, device=image.device).view(1, 3, 1, 1)
    std = torch.tensor(_STD_BGR, dtype=image.dtype, device=image.device).view(1, 3, 1, 1)
    return (bgr - mean) / std
