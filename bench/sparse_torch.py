"""PyTorch peer of bench/sparse.c: a CSR (m x k, per stored entries in each
row) float32 matrix times a dense (k x n) one, on the CPU with 2 threads.

Usage: sparse_torch.py M K PER N REPS. The matrix has the same structure as
the C side's (row r stores one column in each of PER equal strata of the
k columns, drawn uniformly; values uniform in [-1, 1)), drawn from torch's
own generator: timings depend on the structure, not on the exact values.
Prints name=value lines: torch_threads, torch_csr_dot_ms (median of REPS
runs after a warm-up), torch_csr_dot_best_ms and torch_csr_t_dot_ms (the
transposed product csr^T x dense(m x n), or an error note)."""
import statistics
import sys
import time


def median_ms(fn, reps):
    fn()  # warm-up
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t), min(t)


def main():
    m, k, per, n, reps = (int(a) for a in sys.argv[1:6])
    try:
        import warnings

        import torch
    except ImportError as e:
        print(f"torch_error=torch unavailable ({e})")
        return
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    print(f"torch_threads={torch.get_num_threads()}")
    g = torch.Generator().manual_seed(7)
    width = k // per
    cols = torch.arange(per).unsqueeze(0) * width + torch.randint(
        0, width, (m, per), generator=g)
    crow = torch.arange(0, m * per + 1, per)
    vals = torch.rand(m * per, generator=g) * 2 - 1
    a = torch.sparse_csr_tensor(crow, cols.reshape(-1), vals, (m, k))
    w = torch.rand(k, n, generator=g) * 2 - 1
    ms, best = median_ms(lambda: a @ w, reps)
    print(f"torch_csr_dot_ms={ms:.3f}")
    print(f"torch_csr_dot_best_ms={best:.3f}")
    gy = torch.rand(m, n, generator=g) * 2 - 1
    try:
        at = a.t()
        ms_t, _ = median_ms(lambda: at @ gy, max(1, reps // 3))
        print(f"torch_csr_t_dot_ms={ms_t:.3f}")
    except RuntimeError as e:  # layouts without a transposed kernel
        print(f"torch_csr_t_dot_note=unsupported ({str(e)[:80]})")


if __name__ == "__main__":
    main()
