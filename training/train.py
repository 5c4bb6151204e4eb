"""Trains the detector on YOLO datasets, on the GPU when there is one, else on the CPU.

    /usr/bin/python3 training/train.py --init nanodet --classes fruit \
        --data ../shared/data/fruit-pretrain/cherry --data ../shared/data/fruit-pretrain/pear --epochs 6 --out training/work/runs/pretrain
    /usr/bin/python3 training/train.py --init training/work/runs/pretrain/last.pt \
        --data training/work/tomato/train --tune training/work/tomato/tune --epochs 30 --out training/work/runs/tomato \
        --export models/cropwalk-tomato

--init: `nanodet` (ported COCO weights, port.py), a checkpoint (.pt) or a model this pipeline exported (.onnx,
e.g. the one in models/). --data DIR[=WEIGHT]: a YOLO dataset; tiles are drawn from the datasets in proportion to
their weights. --tune DIR: images the score threshold and the best epoch are chosen on (never the photos reported).
Writes <out>/last.pt every epoch, <out>/best.pt (best F1 on --tune, or the last), <out>/log.jsonl; with --export,
the ONNX model and its manifest (export.py).
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import math
import os
import sys
import time

# OpenMP threads that spin while they wait burn a shared CPU for nothing (measured here: 2 spinning threads took
# about 3x the CPU of 2 passive ones for the same batch while other work ran). Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint import load_init, save  # noqa: E402
from data import Augment, TrainSet, collate, read_class_names, read_yolo  # noqa: E402
from loss import DetectionLoss  # noqa: E402
from model import STRIDES, points  # noqa: E402

DEFAULT_CLASSES = ["green", "turning", "red"]


class Ema:
    """Exponential moving average of the weights (evaluated and exported instead of the raw weights)."""

    def __init__(self, model, decay: float = 0.998, warmup: int = 200):
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.decay, self.warmup, self.updates = decay, warmup, 0

    @torch.no_grad()
    def update(self, model):
        self.updates += 1
        d = self.decay * (1 - math.exp(-self.updates / self.warmup))
        for e, m in zip(self.model.state_dict().values(), model.state_dict().values()):
            if e.dtype.is_floating_point:
                e.mul_(d).add_(m.detach(), alpha=1 - d)


def parse_data(specs: list[str]):
    out = []
    for spec in specs:
        path, _, weight = spec.partition("=")
        out.append((path, float(weight) if weight else 1.0))
    return out


def device_of(choice: str) -> torch.device:
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


def train(args) -> dict:
    dev = device_of(args.device)
    if dev.type == "cpu":
        torch.set_num_threads(args.threads or max(1, os.cpu_count() or 1))
    torch.manual_seed(args.seed)
    classes = args.classes.split(",") if args.classes else None
    sources = []
    for path, weight in parse_data(args.data):
        from data import open_dataset

        names = read_class_names(open_dataset(path)) or ["fruit"]
        classes = classes or (DEFAULT_CLASSES if set(names) <= set(DEFAULT_CLASSES) else names)
        samples = read_yolo(path)
        if not samples:
            raise SystemExit(f"{path}: no images")
        sources.append((samples, weight))
        print(f"data {path}: {len(samples)} images, {sum(len(s.boxes) for s in samples)} boxes, weight {weight}")
    model, init_info = load_init(args.init, classes)
    model.to(dev)
    h, w = args.size, args.size
    aug = Augment(size=(h, w), fruit_px=(args.min_fruit, args.max_fruit), occlusion=args.occlusion, blur=args.blur)
    class_map = dict(kv.split("=") for kv in args.class_map) if args.class_map else None
    ds = TrainSet(sources, classes, aug, args.tiles, seed=args.seed, class_map=class_map)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=False, num_workers=args.workers, collate_fn=collate,
                                         persistent_workers=args.workers > 0)
    centres, strides = points(h, w, dev)
    level_sizes = [((h + s - 1) // s) * ((w + s - 1) // s) for s in STRIDES]
    criterion = DetectionLoss(len(classes), centres, strides, level_sizes)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
    steps = args.epochs * len(loader)
    warm = min(args.warmup, max(1, steps // 5))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: (i + 1) / warm if i < warm else 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * (i - warm) / max(1, steps - warm)))
    )
    ema = Ema(model, warmup=max(50, min(200, steps // 5)))
    tune = read_yolo(args.tune) if args.tune else None
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "log.jsonl"), "a", encoding="utf8")
    started = time.time()
    best = None
    info = {
        "classes": classes,
        "input": [int(v) for v in args.input.split(",")] if args.input else list(init_info.get("input", [416, 736])),
        "init": args.init if not args.init.endswith(".onnx") else os.path.basename(args.init),
        "init_info": init_info,
        "data": [os.path.relpath(p) for p, _ in parse_data(args.data)],
        "device": dev.type,
    }
    for epoch in range(args.epochs):
        ds.epoch = epoch
        model.train()
        t0 = time.time()
        sums, n = {}, 0
        for images, targets in loader:
            images = images.to(dev)
            from model import normalise

            logits, sides = model(normalise(images))
            loss, parts = criterion(logits, sides, targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 10.0)
            opt.step()
            sched.step()
            ema.update(model)
            for k, v in parts.items():
                sums[k] = sums.get(k, 0) + v
            n += 1
            if args.progress and n % args.progress == 0:
                print(f"  epoch {epoch + 1} batch {n}/{len(loader)} loss {float(loss):.3f} {time.time() - t0:.0f} s", flush=True)
        record = {"epoch": epoch + 1, "seconds": round(time.time() - t0, 1), "lr": opt.param_groups[0]["lr"]}
        record.update({k: round(v / max(n, 1), 4) for k, v in sums.items()})
        if tune:
            from evaluate import pick_conf, predict_all

            ih, iw = info["input"]
            preds = predict_all(ema.model, tune, ih, iw, 0.1, dev)
            conf, r = pick_conf(tune, preds, classes)
            f1 = 2 * r["precision"] * r["recall"] / max(r["precision"] + r["recall"], 1e-9)
            record.update({"tune_conf": conf, "tune_f1": round(f1, 4), "tune_precision": round(r["precision"], 4),
                           "tune_recall": round(r["recall"], 4), "tune_count_error": round(r["median_count_error"], 4),
                           "tune_ripeness": round(r["ripeness_agreement"], 4)})
            if best is None or f1 > best[0] + 1e-9:
                best = (f1, epoch + 1, conf)
                save(os.path.join(args.out, "best.pt"), ema.model, {**info, "epoch": epoch + 1, "conf": {"photo": conf, "video": args.video_conf or conf}})
        print(json.dumps(record), flush=True)
        log.write(json.dumps(record) + "\n")
        log.flush()
        save(os.path.join(args.out, "last.pt"), ema.model, {**info, "epoch": epoch + 1})
    minutes = (time.time() - started) / 60
    chosen = os.path.join(args.out, "best.pt") if best else os.path.join(args.out, "last.pt")
    ck = torch.load(chosen, map_location="cpu")
    final_info = dict(ck["info"])
    # Without a tuning set, the thresholds of the model trained from (a fine-tune keeps the shipped model's), or --photo-conf.
    inherited = init_info.get("conf") if isinstance(init_info, dict) else None
    conf = final_info.get("conf") or (
        {"photo": args.photo_conf, "video": args.video_conf or args.photo_conf} if args.photo_conf else inherited
    ) or {"photo": 0.4, "video": 0.4}
    if args.video_conf:
        conf["video"] = args.video_conf
    final_info["conf"] = conf
    final_info["trained"] = {
        "epochs": args.epochs,
        "best_epoch": best[1] if best else args.epochs,
        "tiles_per_epoch": args.tiles,
        "tile": args.size,
        "minutes": round(minutes, 1),
        "device": dev.type,
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    save(chosen, _load(ck), final_info)
    print(f"trained in {minutes:.1f} min on {dev.type}; chose {os.path.basename(chosen)} (epoch {final_info['trained']['best_epoch']}), conf {conf}")
    if args.export:
        from export import export

        ih, iw = final_info["input"]
        manifest = export(_load(ck), args.export, ih, iw, final_info, args.name)
        print(f"exported {manifest}")
    return final_info


def _load(ck):
    from model import Detector

    m = Detector(ck["classes"])
    m.load_state_dict(ck["state"])
    return m


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--init", required=True)
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--classes", default=None, help="comma-separated model classes (default: green,turning,red for ripeness data)")
    ap.add_argument("--class-map", action="append", default=None, help="dataset class=model class, e.g. fruit=red")
    ap.add_argument("--tune", default=None)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--tiles", type=int, default=800, help="tiles per epoch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=416, help="training tile side (multiple of 32)")
    ap.add_argument("--input", default=None, help="H,W of the exported model's input (multiples of 32; default: the initial model's, else 416,736)")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--min-fruit", type=float, default=14)
    ap.add_argument("--max-fruit", type=float, default=160)
    ap.add_argument("--occlusion", type=float, default=0.5)
    ap.add_argument("--blur", type=float, default=0.4)
    ap.add_argument("--photo-conf", type=float, default=None, help="threshold when there is no --tune set (default: the initial model's, else 0.4)")
    ap.add_argument("--video-conf", type=float, default=None)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--progress", type=int, default=0, help="print the loss every N batches")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="auto", help="auto (cuda when available), cpu, cuda")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--export", default=None, help="path without extension for the ONNX model and manifest")
    ap.add_argument("--name", default=None, help="the model's name in its manifest (default: the export's file name)")
    train(ap.parse_args(argv))


if __name__ == "__main__":
    main()
