"""mxc.KVStore("dist_sync") across the ranks of an MPI job
(kvstore_dist_test.sh runs it with mpirun -np 2): init takes rank 0's
value, pushpull sums over the ranks, and 20 optimizer steps leave the
same bytes on every rank; mxc.nn.Fit(kvstore=kv) trains each rank on its
part of the data to the accuracy goal with the same parameters on every
rank. Exits nonzero on the first failure."""
import os
import sys

import numpy as np

import mxc
from mxc import nn


def same_bytes_on_every_rank(kv, mine, tag):
    base = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"),
                        "py_kv_%s_" % tag)
    with open(base + str(kv.rank), "wb") as f:
        f.write(mine)
    kv.barrier()
    if kv.rank == 0:
        for r in range(1, kv.num_workers):
            with open(base + str(r), "rb") as f:
                assert f.read() == mine, "rank %d holds other bytes" % r
    kv.barrier()


def fit_through_the_store(kv):
    """Three classes in 4-d, 192 rows (each rank reads its part), rank-own
    random initial values (the fit starts every rank from rank 0's)."""
    n = 192
    y = np.arange(n) % 3
    x = np.random.default_rng(4).normal(0, 0.3, (n, 4)).astype(np.float32)
    x[np.arange(n), y] += 2.0
    tmp = os.environ.get("TEST_TMPDIR", "/tmp")
    data = os.path.join(tmp, "py_fit_%d.csv" % kv.rank)
    labels = os.path.join(tmp, "py_fit_y_%d.csv" % kv.rank)
    np.savetxt(data, x, delimiter=",", fmt="%.6f")
    np.savetxt(labels, y, fmt="%d")
    train = mxc.CSVIter(data, 4, 16, labels=labels)
    val = mxc.CSVIter(data, 4, 32, labels=labels)
    mxc.seed(50 + kv.rank)
    net = nn.Sequential(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize("xavier")
    fit = nn.Fit(net, nn.SoftmaxCrossEntropyLoss(),
                 nn.Optimizer(net, "sgd_update", lr=0.2), kvstore=kv,
                 epochs=5, progress=False)
    fit.run(train, val)
    assert fit["num_workers"] == kv.num_workers and fit["rank"] == kv.rank
    # 192 / N rows per rank in batches of 16, 5 epochs.
    assert fit["num_update"] == 5 * (n // kv.num_workers // 16), \
        fit["num_update"]
    assert fit["val_accuracy"] >= 0.9, fit["val_accuracy"]
    mine = b"".join(p.asnumpy().tobytes() for p in net.params().values())
    same_bytes_on_every_rank(kv, mine, "fit")


def main():
    kv = mxc.KVStore("dist_sync")
    rank, n = kv.rank, kv.num_workers
    assert kv.type == "dist_sync" and n == int(os.environ["MXC_TEST_NP"])
    w = mxc.array(np.full((4,), rank + 1, np.float32))
    kv.init("w", w)
    kv.pull("w", w)
    np.testing.assert_array_equal(w.asnumpy(), np.ones(4, np.float32))

    g = mxc.array(np.arange(6, dtype=np.int64) * (rank + 1))
    kv.init(7, mxc.zeros((6,), np.int64))
    kv.pushpull(7, g)
    np.testing.assert_array_equal(g.asnumpy(),
                                  np.arange(6) * (n * (n + 1) // 2))

    rng = np.random.default_rng(100 + rank)
    kv.set_optimizer("adam_update", lr=0.01, rescale_grad=0.5)
    p = mxc.array(rng.standard_normal(1000).astype(np.float32))
    kv.init("p", p)
    for _ in range(20):
        kv.push("p", mxc.array(rng.standard_normal(1000).astype(np.float32)))
    kv.pull("p", p)
    same_bytes_on_every_rank(kv, p.asnumpy().tobytes(), "adam")
    kv.set_updater(None)  # the fit steps its own optimizer
    fit_through_the_store(kv)
    kv.close()
    print("rank %d of %d: ok" % (rank, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
