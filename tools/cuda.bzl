"""The CUDA toolkit, when the build machine has one (issue 17's plug-in).

`local_cuda` makes the repository @local_cuda: with a toolkit at
$MXC_CUDA_HOME (default /usr/local/cuda) it links the toolkit's include/,
lib64/ and bin/ there and defines cudart_static (the CUDA runtime linked
into the plug-in, so the plug-in needs only the driver at run time); its
defs.bzl says HAVE_CUDA = True and CUDA_HOME. Without a toolkit, defs.bzl
says HAVE_CUDA = False and the CUDA targets are replaced by a test that
reports the skip (backends/cuda/BUILD): README's commands work on a
fresh Debian machine either way."""

_BUILD = """
package(default_visibility = ["//visibility:public"])

# Host API headers (cuda_runtime_api.h and what it includes) and the static
# runtime. -isystem (includes): the toolkit's headers are not held to
# mxc's warning flags.
cc_library(
    name = "cudart_static",
    srcs = ["lib64/libcudart_static.a"],
    hdrs = glob([
        "include/*.h",
        "include/*.hpp",
        "include/nv/**",
        "include/crt/*.h",
        "include/crt/*.hpp",
    ]),
    includes = ["include"],
    linkopts = [
        "-ldl",
        "-lpthread",
        "-lrt",
    ],
)

exports_files(glob(["bin/*"]))
"""

def _local_cuda_impl(ctx):
    home = ctx.os.environ.get("MXC_CUDA_HOME", "/usr/local/cuda")
    need = ["bin/nvcc", "include/cuda_runtime_api.h", "lib64/libcudart_static.a"]
    have = all([ctx.path(home + "/" + f).exists for f in need])
    if have:
        for d in ["include", "lib64", "bin"]:
            ctx.symlink(home + "/" + d, d)
        ctx.file("BUILD", _BUILD)
    else:
        ctx.file("BUILD", "# No CUDA toolkit at %s.\n" % home)
    ctx.file("defs.bzl", "HAVE_CUDA = %s\nCUDA_HOME = %r\n" % (have, home))

local_cuda = repository_rule(
    implementation = _local_cuda_impl,
    environ = ["MXC_CUDA_HOME"],
    local = True,
)
