#!/usr/bin/env python3
"""PyTorch peer of bench/data: torch.utils.data.DataLoader over
torchvision's ImageFolder on the JPEG files bench/data's iterator reads
packed (scripts/make_bench_images.py), doing the same work per image:
decode (PIL, the default loader), RandomCrop to CROP x CROP,
RandomHorizontalFlip, ToTensor, Normalize with ImageNet's mean and std.
num_workers = --threads worker processes, each with
torch.set_num_threads(1), persistent across epochs; shuffled; the same
batch size; the last short batch kept.

Runs --warmup epochs (the workers start there), then times --epochs
epochs, each from the loader's first batch request to its last batch in
the main process, and prints name=value lines:
    image_iter_torch_images_per_s=...         best epoch
    image_iter_torch_median_images_per_s=...  median epoch
    image_iter_torch_epoch_images=...         images in each epoch
    image_iter_torch_label_sum=...            sum of an epoch's labels
    image_iter_torch_mean_r=... _g, _b        first epoch's mean per channel
    image_iter_torch_std=...                  and std of all its values
(the last four let bench/data check that both sides read the same set and
made the same values of it). The first epoch also adds up the values, so
with --warmup 0 its time includes that.

Usage: data_torch.py --root DIR [--threads 2] [--batch-size 64]
                     [--crop 224] [--epochs 3] [--warmup 1] [--seed 1]
"""
import argparse
import statistics
import sys
import time

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def one_thread(_worker_id):
    """Worker start: one intra-op thread, as the iterator's workers use."""
    import torch
    torch.set_num_threads(1)


def make_loader(a, torch, datasets, transforms):
    tf = transforms.Compose([
        transforms.RandomCrop(a.crop),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    data = datasets.ImageFolder(a.root, transform=tf)
    gen = torch.Generator().manual_seed(a.seed)
    return torch.utils.data.DataLoader(
        data, batch_size=a.batch_size, shuffle=True, num_workers=a.threads,
        worker_init_fn=one_thread, persistent_workers=True, generator=gen)


def epoch(loader, crop, moments=None):
    """(seconds, images, label sum) of one pass over loader; with moments
    (a list [sum per channel, sum of squares per channel], float64) also
    adds up the values (inside the epoch's time)."""
    images = label_sum = 0
    t0 = time.perf_counter()
    for x, y in loader:
        if tuple(x.shape[1:]) != (3, crop, crop):
            sys.exit("data_torch.py: batch of shape %s" % (tuple(x.shape),))
        images += x.shape[0]
        label_sum += int(y.sum())
        if moments is not None:
            x = x.double()
            moments[0] += x.sum(dim=(0, 2, 3))
            moments[1] += (x * x).sum(dim=(0, 2, 3))
    return time.perf_counter() - t0, images, label_sum


def print_moments(moments, values):
    """Mean per channel and standard deviation of all values, as bench/data
    prints its own."""
    for c, name in enumerate("rgb"):
        print("image_iter_torch_mean_%s=%.4f" % (name, moments[0][c] / values))
    mean = float(moments[0].sum()) / (3 * values)
    sq = float(moments[1].sum()) / (3 * values)
    print("image_iter_torch_std=%.4f" % (sq - mean * mean) ** 0.5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--crop", type=int, default=224)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.threads < 1 or a.epochs < 1 or a.warmup < 0:
        sys.exit("data_torch.py: --threads >= 1, --epochs >= 1, --warmup >= 0")
    import torch
    from torchvision import datasets, transforms
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    loader = make_loader(a, torch, datasets, transforms)
    moments = [torch.zeros(3, dtype=torch.float64) for _ in range(2)]
    rates = []
    for e in range(a.warmup + a.epochs):
        seconds, images, label_sum = epoch(loader, a.crop,
                                           moments if e == 0 else None)
        if e >= a.warmup:
            rates.append(images / seconds)
    print("image_iter_torch_images_per_s=%.1f" % max(rates))
    print("image_iter_torch_median_images_per_s=%.1f" % statistics.median(rates))
    print("image_iter_torch_epoch_images=%d" % images)
    print("image_iter_torch_label_sum=%d" % label_sum)
    print_moments(moments, images * a.crop * a.crop)


if __name__ == "__main__":
    main()
