#!/usr/bin/env python3
"""PyTorch (CPU) peer of bench/train: the same two Fashion-MNIST models,
batch size and optimizer as examples/train_fashion_mnist, timed per epoch.

Prints name=value lines, one per model:
    mlp_epoch_s_torch=...     seconds per epoch of 60000 images
    lenet_epoch_s_torch=...
Timing covers what one training step does: forward, loss, backward and the
SGD-with-momentum update, on batches sliced from a tensor already in memory
(real Fashion-MNIST when the Debian files are present, otherwise random
data of the same shape: the cost of these models does not depend on the
values). With --batches N only N batches are timed, after a few warm-up
batches, and the time is scaled to 60000 images.

Usage: train_torch.py [--model mlp|lenet|both] [--batches N]
                      [--batch-size 128] [--threads 2] [--data-dir DIR]
"""
import argparse
import gzip
import os
import struct
import sys
import time

EPOCH_IMAGES = 60000
WARMUP_BATCHES = 5


def read_idx(path):
    """An IDX file (plain or gzip, recognized by its magic bytes) as a
    numpy array."""
    import numpy as np
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    zero, dtype_code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file" % path)
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    return data.reshape(dims)


def load_data(data_dir, torch):
    """(images float32 N x 1 x 28 x 28 scaled to [0, 1], labels int64 N,
    source) from data_dir, or random tensors when the files are missing."""
    images = os.path.join(data_dir, "train-images-idx3-ubyte.gz")
    labels = os.path.join(data_dir, "train-labels-idx1-ubyte.gz")
    if os.path.exists(images) and os.path.exists(labels):
        x = torch.from_numpy(read_idx(images).astype("float32") / 255.0)
        y = torch.from_numpy(read_idx(labels).astype("int64"))
        return x.unsqueeze(1).contiguous(), y, "fashion-mnist"
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(EPOCH_IMAGES, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (EPOCH_IMAGES,), generator=gen)
    return x, y, "synthetic"


def make_model(name, nn):
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 512), nn.ReLU(),
            nn.Linear(512, 256), nn.ReLU(),
            nn.Linear(256, 10))
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(800, 500), nn.Tanh(),
        nn.Linear(500, 10))


def epoch_seconds(name, x, y, batches, batch_size, torch):
    """Seconds per 60000-image epoch of `name`, from `batches` timed
    training steps (0: one whole epoch of full batches)."""
    nn = torch.nn
    torch.manual_seed(0)
    model = make_model(name, nn)
    lr = 0.1 if name == "mlp" else 0.05
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    n_full = x.shape[0] // batch_size
    if batches <= 0 or batches > n_full:
        batches = n_full
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(1))

    def step(b):
        idx = perm[(b % n_full) * batch_size:(b % n_full + 1) * batch_size]
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        return loss

    for b in range(WARMUP_BATCHES):
        step(b)
    start = time.perf_counter()
    for b in range(batches):
        loss = step(WARMUP_BATCHES + b)
    float(loss)  # make sure the last step has finished
    elapsed = time.perf_counter() - start
    return elapsed / (batches * batch_size) * EPOCH_IMAGES


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["mlp", "lenet", "both"],
                    default="both")
    ap.add_argument("--batches", type=int, default=0,
                    help="timed batches per model (0: a whole epoch)")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("train_torch: PyTorch is not installed (Debian: python3-torch)",
              file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    x, y, source = load_data(args.data_dir, torch)
    print("torch_version=%s torch_threads=%d torch_data=%s"
          % (torch.__version__, torch.get_num_threads(), source))
    models = ["mlp", "lenet"] if args.model == "both" else [args.model]
    for name in models:
        s = epoch_seconds(name, x, y, args.batches, args.batch_size, torch)
        print("%s_epoch_s_torch=%.3f" % (name, s), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
