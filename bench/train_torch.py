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

With --model resnet18 it is the peer of bench/train's ResNet-18 step
instead: torchvision's resnet18 with the weights scripts/make_resnet.py
wrote (RESNET_DIR/resnet18.pt), in training mode, trained with
CrossEntropyLoss and SGD (momentum 0.9) on one batch that bench/train wrote
(WORK/train_data.f32: B x 3 x S x S float32, WORK/train_label.f32: B
class numbers as float32), --warmup steps and then --batches timed steps,
all on that batch. Prints
    resnet18_train_torch_ms=...       mean milliseconds per timed step
    resnet18_train_torch_cpu_ms=...   the same in CPU time of the process
    resnet18_train_torch_loss_K=...   the loss of step K (warm-up first)

Usage: train_torch.py [--model mlp|lenet|both] [--batches N]
                      [--batch-size 128] [--threads 2] [--data-dir DIR]
       train_torch.py --model resnet18 --resnet-dir DIR --work WORK
                      [--batch-size 32] [--image-size 224] [--batches N]
                      [--warmup N] [--lr 0.01] [--threads 2]
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


def resnet_step_ms(args, torch):
    """Mean milliseconds per timed ResNet-18 step; prints every loss."""
    import numpy as np
    import torchvision
    b, s = args.batch_size, args.image_size
    x = np.fromfile(os.path.join(args.work, "train_data.f32"), dtype="<f4")
    y = np.fromfile(os.path.join(args.work, "train_label.f32"), dtype="<f4")
    x = torch.from_numpy(x.reshape(b, 3, s, s).copy())
    y = torch.from_numpy(y.astype("int64"))
    model = torchvision.models.resnet18(weights=None)
    model.load_state_dict(torch.load(os.path.join(args.resnet_dir,
                                                  "resnet18.pt")))
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(k):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        print("resnet18_train_torch_loss_%d=%.6f" % (k, float(loss)),
              flush=True)

    for k in range(args.warmup):
        step(k)
    start, cpu = time.perf_counter(), time.process_time()
    for k in range(args.batches):
        step(args.warmup + k)
    n = max(args.batches, 1)
    print("resnet18_train_torch_cpu_ms=%.3f"
          % (1e3 * (time.process_time() - cpu) / n), flush=True)
    return 1e3 * (time.perf_counter() - start) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["mlp", "lenet", "both", "resnet18"],
                    default="both")
    ap.add_argument("--resnet-dir", help="resnet18: make_resnet.py's folder")
    ap.add_argument("--work", help="resnet18: where the batch is")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--warmup", type=int, default=1,
                    help="resnet18: untimed steps first")
    ap.add_argument("--lr", type=float, default=0.01, help="resnet18")
    ap.add_argument("--batches", type=int, default=0,
                    help="timed batches per model (0: a whole epoch)")
    ap.add_argument("--batch-size", type=int, default=None,
                    help="default 128 (resnet18: 32)")
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
    if args.model == "resnet18":
        if args.batch_size is None:
            args.batch_size = 32
        if not args.resnet_dir or not args.work:
            ap.error("--model resnet18 needs --resnet-dir and --work")
        print("torch_version=%s torch_threads=%d"
              % (torch.__version__, torch.get_num_threads()))
        ms = resnet_step_ms(args, torch)
        print("resnet18_train_torch_ms=%.3f" % ms, flush=True)
        return 0
    if args.batch_size is None:
        args.batch_size = 128
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
