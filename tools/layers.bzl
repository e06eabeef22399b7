"""The layering rule of the library, and what enforces it.

LAYER_RULES is the one table of who may include (and depend on) whom:
tools/check_layers.py reads it to check every #include, and each library
package's BUILD file takes its visibility from it (layer_visibility), so
a wrong dependency fails to build and a wrong include fails
//tools:check_layers. Keys are packages; each may use its own files and
those of the packages listed. "mxc" is the public header
(c_api/include/mxc); "core/*" and "ops/*" mean every package below.
Keep the table a plain literal: check_layers.py parses it as Python."""

# The core, lowest first: each builds on all before it.
#   core/base < core/profiler < core/storage < core/engine < core/ndarray < core/resource
#   < core/op < {core/graph < core/fuse, core/autograd, core/exec,
#   core/io, core/train, core/kvstore} < core/nn < ops/* < backends/*
#   < c_api/src
# The passes over graphs sit side by side and never use each other, except
# that exec runs fused graphs. Operator families are plug-ins over core/op:
# never another family, never a graph pass.
LAYER_RULES = {
    "core/base": ["mxc"],
    # Every layer records events; the profiler sees only the base.
    "core/profiler": ["mxc", "core/base"],
    "core/storage": ["mxc", "core/base", "core/profiler"],
    "core/engine": ["mxc", "core/base", "core/profiler", "core/storage"],
    "core/ndarray": ["mxc", "core/base", "core/profiler", "core/storage",
                     "core/engine"],
    "core/resource": ["mxc", "core/base", "core/profiler", "core/storage",
                      "core/engine", "core/ndarray"],
    "core/op": ["mxc", "core/base", "core/profiler", "core/storage",
                "core/engine", "core/ndarray", "core/resource"],
    "core/graph": ["mxc", "core/base", "core/profiler", "core/storage",
                   "core/engine", "core/ndarray", "core/resource", "core/op"],
    "core/fuse": ["mxc", "core/base", "core/profiler", "core/storage",
                  "core/engine", "core/ndarray", "core/resource", "core/op",
                  "core/graph"],
    "core/autograd": ["mxc", "core/base", "core/profiler", "core/storage",
                      "core/engine", "core/ndarray", "core/resource",
                      "core/op", "core/graph"],
    "core/exec": ["mxc", "core/base", "core/profiler", "core/storage",
                  "core/engine", "core/ndarray", "core/resource", "core/op",
                  "core/graph", "core/fuse"],
    "core/io": ["mxc", "core/base", "core/profiler", "core/storage",
                "core/engine", "core/ndarray", "core/resource", "core/op"],
    "core/train": ["mxc", "core/base", "core/profiler", "core/storage",
                   "core/engine", "core/ndarray", "core/resource", "core/op"],
    # The KVStore runs update operators of the registry by name.
    "core/kvstore": ["mxc", "core/base", "core/profiler", "core/storage",
                     "core/engine", "core/ndarray", "core/resource",
                     "core/op"],
    # Layers (blocks, losses, optimizers) over autograd, the executor and
    # the initializers; operators are reached by name through the registry.
    # fit() trains data-parallel through the KVStore.
    "core/nn": ["mxc", "core/base", "core/profiler", "core/storage",
                "core/engine", "core/ndarray", "core/resource", "core/op",
                "core/graph", "core/fuse", "core/autograd", "core/exec",
                "core/io", "core/train", "core/kvstore"],
    # The family table: ops/families.c and the generated ops/families.h.
    "ops": ["mxc", "core/base", "core/profiler", "core/storage", "core/engine",
            "core/ndarray", "core/resource", "core/op"],
    # Every family; "ops" is for ops/families.h.
    "ops/*": ["mxc", "core/base", "core/profiler", "core/storage",
              "core/engine", "core/ndarray", "core/resource", "core/op", "ops"],
    # Backends: kernels for operators of the families, attached by name
    # (core/op/backend.h). They read the families' parameter headers and
    # never each other; nothing includes them (they register from a
    # constructor).
    "backends/onednn": ["mxc", "core/base", "core/profiler", "core/storage",
                        "core/engine", "core/ndarray", "core/resource",
                        "core/op", "ops/*"],
    # The GPU backend's host side: the plug-in's kernels attached by name.
    "backends/gpu": ["mxc", "core/base", "core/profiler", "core/storage",
                     "core/engine", "core/ndarray", "core/resource",
                     "core/op"],
    # The CUDA plug-in (its own library, loaded with dlopen): the plug-in
    # interface of core/base; it links nothing of libmxc (its -z defs link
    # fails on any call into it). Its kernels read the families' parameter
    # structs: headers of ops/* and the core/op, core/resource headers
    # those include, nothing more (the plug-in reports its mxc version and
    # only the same is accepted).
    "backends/cuda": ["mxc", "core/base", "core/resource", "core/op",
                      "ops/*"],
    # The MPI plug-in (its own library, loaded with dlopen): the plug-in
    # interface of core/kvstore (mpi_plugin.h) alone; it links nothing of
    # libmxc.
    "backends/mpi": ["mxc", "core/kvstore"],
    # The ABI layer sees the library's core; it links the families (//ops)
    # but never includes them: operators are reached by name.
    "c_api/src": ["mxc", "core/*"],
    # The public header stands alone.
    "mxc": [],
}

# Bazel packages whose targets bundle or test the libraries: allowed to
# depend on any of them (they contain no library code).
_ALWAYS_VISIBLE_TO = [
    "//c_api:__pkg__",
    "//tests:__subpackages__",
    "//bench:__subpackages__",
]

def _allows(allowed, pkg):
    for a in allowed:
        if a == pkg or (a.endswith("/*") and pkg.startswith(a[:-1])):
            return True
    return False

def _bazel_package(user):
    if user == "mxc":
        return None
    if user == "c_api/src":
        return "//c_api:__pkg__"
    if user.endswith("/*"):
        return "//" + user[:-2] + ":__subpackages__"
    return "//" + user + ":__pkg__"

def layer_visibility(pkg):
    """Visibility for the library package pkg: the packages that LAYER_RULES
    lets use it (and their own package), plus the bundling and test ones.
    The families are also visible to //ops, whose table links them all
    without including them."""
    vis = ["//" + pkg + ":__pkg__"] + _ALWAYS_VISIBLE_TO
    for user, allowed in LAYER_RULES.items():
        if user != pkg and _allows(allowed, pkg):
            label = _bazel_package(user)
            if label and label not in vis:
                vis.append(label)
    if pkg.startswith("ops/"):
        vis.append("//ops:__pkg__")
    return vis

# ---- the library's sources, for //tools:check_layers ----
# A glob cannot reach into other packages, and listing the files again
# would drift. An aspect walks the deps of the libraries instead,
# collecting the srcs and hdrs of every target under core/, ops/,
# backends/ and c_api/ (generated headers such as ops/families.h included), so the check
# covers what is actually built and reruns when any of it changes.

_TOPS = ("core/", "ops/", "backends/", "c_api/")

_LayerSourcesInfo = provider(fields = ["files"])

def _is_library_source(f):
    return f.short_path.startswith(_TOPS) and f.basename.endswith((".c", ".h"))

def _collect_impl(target, ctx):
    direct = []
    for attr in ("srcs", "hdrs", "textual_hdrs"):
        for f in getattr(ctx.rule.files, attr, []):
            if _is_library_source(f):
                direct.append(f)
    transitive = [
        d[_LayerSourcesInfo].files
        for d in getattr(ctx.rule.attr, "deps", [])
        if _LayerSourcesInfo in d
    ]
    return [_LayerSourcesInfo(files = depset(direct, transitive = transitive))]

_collect = aspect(
    implementation = _collect_impl,
    attr_aspects = ["deps"],
)

def _layer_sources_impl(ctx):
    files = depset(
        transitive = [d[_LayerSourcesInfo].files for d in ctx.attr.deps],
    )
    return [DefaultInfo(
        files = files,
        runfiles = ctx.runfiles(transitive_files = files),
    )]

layer_sources = rule(
    implementation = _layer_sources_impl,
    attrs = {"deps": attr.label_list(aspects = [_collect])},
    doc = "Every .c/.h under core/, ops/, backends/ and c_api/ that deps are built from.",
)
