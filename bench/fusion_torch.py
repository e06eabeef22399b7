"""The PyTorch side of bench/fusion: y = 1 / (1 + exp(-(a x + b))) on N
float32 values on the CPU with 2 threads, the median of REPS runs after two
warm-up runs. Prints torch_sigmoid_ms=<ms> (and torch_error=<why> when torch
cannot be imported). Usage: fusion_torch.py [N [REPS]]."""
import sys
import time


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    try:
        import torch
    except Exception as e:  # not installed, or broken
        print("torch_error=%s" % str(e).replace("\n", " "))
        return
    torch.set_num_threads(2)
    a, b = 0.5, 0.25
    x = torch.rand(n, dtype=torch.float32) * 8 - 4

    def f(v):
        return 1 / (1 + torch.exp(-(a * v + b)))

    for _ in range(2):
        f(x)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(x)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    mid = len(times) // 2
    med = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
    print("torch_version=%s" % torch.__version__)
    print("torch_threads=%d" % torch.get_num_threads())
    print("torch_sigmoid_ms=%.3f" % med)


if __name__ == "__main__":
    main()
