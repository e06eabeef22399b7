"""mxc.KVStore("dist_sync") across the ranks of an MPI job
(kvstore_dist_test.sh runs it with mpirun -np 2): init takes rank 0's
value, pushpull sums over the ranks, and 20 optimizer steps leave the
same bytes on every rank. Exits nonzero on the first failure."""
import os
import sys

import numpy as np

import mxc


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
    mine = p.asnumpy().tobytes()
    base = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "py_kv_")
    with open(base + str(rank), "wb") as f:
        f.write(mine)
    kv.barrier()
    if rank == 0:
        for r in range(1, n):
            with open(base + str(r), "rb") as f:
                assert f.read() == mine, "rank %d holds other bytes" % r
    kv.barrier()
    kv.close()
    print("rank %d of %d: ok" % (rank, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
