"""Training targets and losses, written here from the papers (no detection framework's code):

- assignment: ATSS (Zhang et al., "Bridging the Gap Between Anchor-based and Anchor-free Detection via
  Adaptive Training Sample Selection", 2020): per ground-truth box and level, the k cells nearest its centre
  are candidates; each is judged by the IoU of a square "anchor" (anchor_scale x stride) at the cell with the
  box; candidates at or above mean + std of those IoUs, with their centre inside the box, are positives; a
  cell claimed by several boxes goes to the one its anchor overlaps most.
- classification: Quality Focal Loss (Li et al., "Generalized Focal Loss", 2020): the positive's target at
  its class is the IoU of its predicted box with its ground truth, every other target 0; binary cross-entropy
  scaled by |target - sigmoid|^beta.
- boxes: GIoU loss on the decoded boxes, and Distribution Focal Loss on each side's bins, both on positives,
  weighted by the detached predicted quality.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from model import REG_MAX, decode


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise IoU, a [n, 4], b [m, 4] -> [n, m]."""
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(2)
    area_a = (a[:, 2:] - a[:, :2]).clamp(min=0).prod(1)
    area_b = (b[:, 2:] - b[:, :2]).clamp(min=0).prod(1)
    return inter / (area_a[:, None] + area_b[None, :] - inter).clamp(min=1e-9)


def aligned_iou(a: torch.Tensor, b: torch.Tensor, giou: bool = False) -> torch.Tensor:
    lt = torch.max(a[:, :2], b[:, :2])
    rb = torch.min(a[:, 2:], b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(1)
    union = (a[:, 2:] - a[:, :2]).clamp(min=0).prod(1) + (b[:, 2:] - b[:, :2]).clamp(min=0).prod(1) - inter
    iou = inter / union.clamp(min=1e-9)
    if not giou:
        return iou
    hull = (torch.max(a[:, 2:], b[:, 2:]) - torch.min(a[:, :2], b[:, :2])).clamp(min=0).prod(1)
    return iou - (hull - union) / hull.clamp(min=1e-9)


def atss_assign(centres, strides, level_sizes, gt_boxes, k: int = 9, anchor_scale: float = 5.0):
    """For N cells and G boxes: index of the assigned box per cell (-1 for background) [N], and the IoU used."""
    n = centres.shape[0]
    assigned = torch.full((n,), -1, dtype=torch.long, device=centres.device)
    if gt_boxes.numel() == 0:
        return assigned
    half = strides[:, None] * anchor_scale / 2
    anchors = torch.cat([centres - half, centres + half], 1)
    ious = box_iou(anchors, gt_boxes)  # [N, G]
    gt_c = (gt_boxes[:, :2] + gt_boxes[:, 2:]) / 2
    dist = torch.cdist(centres, gt_c)  # [N, G]
    candidates = []
    start = 0
    for size in level_sizes:
        kk = min(k, size)
        _, idx = dist[start : start + size].topk(kk, dim=0, largest=False)
        candidates.append(idx + start)
        start += size
    cand = torch.cat(candidates, 0)  # [K, G]
    cand_iou = ious.gather(0, cand)
    thresh = cand_iou.mean(0) + cand_iou.std(0)
    g = torch.arange(gt_boxes.shape[0], device=centres.device).expand_as(cand)
    cx, cy = centres[cand, 0], centres[cand, 1]
    inside = (cx > gt_boxes[g, 0]) & (cx < gt_boxes[g, 2]) & (cy > gt_boxes[g, 1]) & (cy < gt_boxes[g, 3])
    positive = (cand_iou >= thresh[None]) & inside
    best = torch.full((n, gt_boxes.shape[0]), -1.0, device=centres.device)
    best[cand[positive], g[positive]] = cand_iou[positive]
    value, which = best.max(1)
    assigned[value >= 0] = which[value >= 0]
    return assigned


def quality_focal_loss(logits, target, beta: float = 2.0):
    p = logits.sigmoid()
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none") * (target - p).abs().pow(beta)


def distribution_focal_loss(side_logits, target):
    """side_logits [P, REG_MAX+1], target distances in strides [P] (clamped inside the bins)."""
    target = target.clamp(0, REG_MAX - 0.01)
    left = target.floor().long()
    wl = left.float() + 1 - target
    wr = target - left.float()
    return F.cross_entropy(side_logits, left, reduction="none") * wl + F.cross_entropy(side_logits, left + 1, reduction="none") * wr


class DetectionLoss:
    def __init__(self, classes: int, centres, strides, level_sizes, box_weight: float = 2.0, dfl_weight: float = 0.25):
        self.classes = classes
        self.centres = centres
        self.strides = strides
        self.level_sizes = level_sizes
        self.box_weight = box_weight
        self.dfl_weight = dfl_weight

    def __call__(self, logits, sides, targets):
        """logits [B, C, N], sides [B, 4*(REG_MAX+1), N], targets: per image (boxes [G, 4], labels [G])."""
        b, c, n = logits.shape
        boxes = decode(sides, self.centres, self.strides)  # [B, N, 4]
        cls_target = torch.zeros_like(logits)
        total_qfl = logits.new_zeros(())
        box_losses, dfl_losses, weights = [], [], []
        positives = 0
        for i, (gt, labels) in enumerate(targets):
            gt = gt.to(logits.device)
            labels = labels.to(logits.device)
            assigned = atss_assign(self.centres, self.strides, self.level_sizes, gt)
            pos = (assigned >= 0).nonzero().squeeze(1)
            if pos.numel() == 0:
                continue
            positives += pos.numel()
            g = assigned[pos]
            pred = boxes[i, pos]
            target_box = gt[g]
            with torch.no_grad():
                quality = aligned_iou(pred.detach(), target_box).clamp(min=0)
            cls_target[i, labels[g], pos] = quality
            weight = logits[i, :, pos].detach().sigmoid().max(0).values
            box_losses.append((1 - aligned_iou(pred, target_box, giou=True)) * weight)
            s = self.strides[pos]
            cx, cy = self.centres[pos, 0], self.centres[pos, 1]
            dist = torch.stack([cx - target_box[:, 0], cy - target_box[:, 1], target_box[:, 2] - cx, target_box[:, 3] - cy], 1) / s[:, None]
            side = sides[i, :, pos].view(4, REG_MAX + 1, -1).permute(2, 0, 1).reshape(-1, REG_MAX + 1)
            dfl_losses.append(distribution_focal_loss(side, dist.reshape(-1)).view(-1, 4).mean(1) * weight)
            weights.append(weight)
        norm = max(positives, 1)
        total_qfl = quality_focal_loss(logits, cls_target).sum() / norm
        if weights:
            wsum = torch.cat(weights).sum().clamp(min=1e-6)
            box = torch.cat(box_losses).sum() / wsum
            dfl = torch.cat(dfl_losses).sum() / wsum
        else:
            box = dfl = logits.new_zeros(())
        loss = total_qfl + self.box_weight * box + self.dfl_weight * dfl
        return loss, {"qfl": float(total_qfl), "giou": float(box), "dfl": float(dfl), "positives": positives}
