#!/usr/bin/env python3
"""PyTorch (CPU) peer of bench/infer: forward latency of torchvision's
ResNets with the weights scripts/make_resnet.py wrote (MODEL.pt), on the
inputs bench/infer wrote, in inference mode with 2 threads.

For each model M and batch B, reads WORK/input_bB.f32 (B x 3 x S x S
float32), times --iters forwards after --warmup ones, writes the logits
of the last forward to WORK/M_bB.torch.f32 and prints name=value lines:
    M_bB_torch_ms=...          best forward, milliseconds
    M_bB_torch_median_ms=...   median forward

Usage: infer_torch.py --model-dir DIR --work WORK [--models resnet18,...]
                      [--batches 1,32] [--image-size 224] [--iters N]
                      [--warmup N] [--threads 2]
"""
import argparse
import os
import statistics
import sys
import time


def timed(model, x, iters, warmup):
    """(best, median) milliseconds of model(x) and the last logits."""
    for _ in range(warmup):
        y = model(x)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        y = model(x)
        times.append(1e3 * (time.perf_counter() - t0))
    return min(times), statistics.median(times), y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="resnet18,resnet50")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        import torchvision
    except ImportError as e:
        print("infer_torch: %s (Debian: python3-torch python3-torchvision)"
              % e, file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    print("torch_version=%s torch_threads=%d"
          % (torch.__version__, torch.get_num_threads()), flush=True)
    s = args.image_size
    for name in args.models.split(","):
        model = getattr(torchvision.models, name)(weights=None)
        state = torch.load(os.path.join(args.model_dir, name + ".pt"))
        model.load_state_dict(state)
        model.eval()
        for b in [int(v) for v in args.batches.split(",")]:
            raw = np.fromfile(os.path.join(args.work, "input_b%d.f32" % b),
                              dtype="<f4")
            x = torch.from_numpy(raw.reshape(b, 3, s, s).copy())
            with torch.inference_mode():
                best, med, y = timed(model, x, max(args.iters, 1),
                                     args.warmup)
            tag = "%s_b%d" % (name, b)
            y.numpy().astype("<f4").tofile(
                os.path.join(args.work, tag + ".torch.f32"))
            print("%s_torch_ms=%.3f" % (tag, best))
            print("%s_torch_median_ms=%.3f" % (tag, med), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
