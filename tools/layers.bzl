"""The library's C sources as one set of files, for tools/check_layers.py.

A glob cannot reach into other packages, and listing the files again in
every BUILD file would drift. An aspect walks the deps of the libraries
instead, collecting the srcs and hdrs of every target under core/, ops/
and c_api/ (generated headers such as ops/families.h included), so the
check covers what is actually built and reruns when any of it changes."""

_TOPS = ("core/", "ops/", "c_api/")

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
    files = depset(transitive = [d[_LayerSourcesInfo].files for d in ctx.attr.deps])
    return [DefaultInfo(
        files = files,
        runfiles = ctx.runfiles(transitive_files = files),
    )]

layer_sources = rule(
    implementation = _layer_sources_impl,
    attrs = {"deps": attr.label_list(aspects = [_collect])},
    doc = "Every .c/.h under core/, ops/ and c_api/ that deps are built from.",
)
