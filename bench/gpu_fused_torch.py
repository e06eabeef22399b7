"""The PyTorch side of bench/gpu's fused chain: y = relu((a*b + c)^2 - d) * a
on N float32 values on cuda:0, eager (six kernels), the median of REPS runs
after two warm-up runs, each timed to torch.cuda.synchronize(). Prints
torch_version=, torch_chain_gpu_ms=<ms>, or torch_error=<why>.
Usage: gpu_fused_torch.py [N [REPS]]."""
import sys
import time


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as e:  # not installed, broken, or no CUDA
        print("torch_error=%s" % str(e).replace("\n", " "))
        return
    g = torch.Generator(device="cuda").manual_seed(7)
    a, b, c, d = (torch.rand(n, device="cuda", generator=g) * 4 - 2
                  for _ in range(4))

    def f():
        return torch.relu(torch.square(a * b + c) - d) * a

    for _ in range(2):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("torch_version=%s" % torch.__version__)
    print("torch_chain_gpu_ms=%.3f" % times[len(times) // 2])


if __name__ == "__main__":
    main()
