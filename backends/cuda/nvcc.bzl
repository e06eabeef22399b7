"""Device code of the CUDA plug-in: one macro for every .cu file."""

load("@local_cuda//:defs.bzl", "CUDA_HOME", "HAVE_CUDA")

# -fmad=false: no contraction into FMA, so results round as the CPU's do.
# Machine code for sm_80 and sm_90, and compute_90 PTX that newer GPUs'
# drivers compile on first load.
_NVCC = " ".join([
    CUDA_HOME + "/bin/nvcc",
    "-c -O3 -std=c++17 -fmad=false",
    "-Xcompiler -fPIC,-fvisibility=hidden",
    "-gencode arch=compute_80,code=sm_80",
    "-gencode arch=compute_90,code=sm_90",
    "-gencode arch=compute_90,code=compute_90",
    "-I. -Ic_api/include",
])

# Every .cu file includes these (the kernel interface and the shared
# runtime calls).
_COMMON_HEADERS = [
    "//backends/cuda:cuda_rt.h",
    "//core/base:gpu_plugin.h",
    "//c_api:include/mxc/mxc.h",
]

def cuda_kernels(name, cu, hdrs, nvcc_hdrs = [], srcs = [], deps = [], **kwargs):
    """A cc_library `name` of one .cu file compiled by nvcc, with C srcs beside it.

    Nothing is declared where no CUDA toolkit is installed (HAVE_CUDA).

    Args:
      name: the library; its object file is NAME.o (genrule NAME_o).
      cu: the .cu file.
      hdrs: the library's headers (also visible to nvcc).
      nvcc_hdrs: other headers the .cu file includes.
      srcs: C files compiled into the same library (host code).
      deps: the library's dependencies.
      **kwargs: passed to cc_library (copts for srcs).
    """
    if not HAVE_CUDA:
        return
    native.genrule(
        name = name + "_o",
        srcs = [cu] + hdrs + nvcc_hdrs + _COMMON_HEADERS,
        outs = [name + ".o"],
        cmd = _NVCC + " -o $@ $(location %s)" % cu,
        # nvcc finds its headers and libraries next to itself: it runs from
        # the toolkit's own directory, not a sandboxed link.
        tags = ["no-remote"],
    )
    native.cc_library(
        name = name,
        srcs = srcs + [":" + name + "_o"],
        hdrs = hdrs,
        linkstatic = True,
        deps = deps + [
            "//backends/cuda:cuda_rt",
            "//core/base:gpu_plugin_header",
        ],
        **kwargs
    )
