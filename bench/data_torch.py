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
(the last two let bench/data check that both sides read the same set).

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


def epoch(loader, crop):
    """(seconds, images, label sum) of one pass over loader."""
    images = label_sum = 0
    t0 = time.perf_counter()
    for x, y in loader:
        if tuple(x.shape[1:]) != (3, crop, crop):
            sys.exit("data_torch.py: batch of shape %s" % (tuple(x.shape),))
        images += x.shape[0]
        label_sum += int(y.sum())
    return time.perf_counter() - t0, images, label_sum


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
    for _ in range(a.warmup):
        epoch(loader, a.crop)
    rates = []
    for _ in range(a.epochs):
        seconds, images, label_sum = epoch(loader, a.crop)
        rates.append(images / seconds)
    print("image_iter_torch_images_per_s=%.1f" % max(rates))
    print("image_iter_torch_median_images_per_s=%.1f" % statistics.median(rates))
    print("image_iter_torch_epoch_images=%d" % images)
    print("image_iter_torch_label_sum=%d" % label_sum)


if __name__ == "__main__":
    main()
