"""The one list of operator families.

Each name is a directory under ops/ holding one family: a library whose
registration function mxc__ops_register_<name> adds its descriptors to the
operator registry (core/op/registry.h). The registry calls the families in
this order; sparse comes last because it attaches kernels to operators the
others registered. From this list the build makes ops/families.h (the
prototypes and the X-macro that ops/families.c turns into the table) and
the dependencies of //ops. A family directory left out of the list fails
to compile: its registration function then has no prototype
(-Wmissing-prototypes)."""

FAMILY_NAMES = [
    "elemwise",
    "binary",
    "reduce",
    "shape",
    "indexing",
    "linalg",
    "nn",
    "random",
    "vision",
    "ctc",
    "fused",
    "custom",
    "sparse",
]

FAMILIES = ["//ops/" + f for f in FAMILY_NAMES]

def families_header():
    """The text of ops/families.h."""
    lines = [
        "/* Generated from ops/families.bzl by //ops:families_h: the operator",
        " * families in registration order. Edit the list there. */",
        "#ifndef MXC_OPS_FAMILIES_H_",
        "#define MXC_OPS_FAMILIES_H_",
        "",
        "#include \"core/op/registry.h\"",
        "",
        "#define MXC__OP_FAMILIES(X) \\",
    ]
    for f in FAMILY_NAMES:
        lines.append("  X(%s) \\" % f)
    lines.append("")
    lines.append("#define MXC__OP_FAMILY_PROTO(name) \\")
    lines.append("  int mxc__ops_register_##name(mxc__registry *r);")
    lines.append("MXC__OP_FAMILIES(MXC__OP_FAMILY_PROTO)")
    lines.append("#undef MXC__OP_FAMILY_PROTO")
    lines.append("")
    lines.append("#endif /* MXC_OPS_FAMILIES_H_ */")
    return "\n".join(lines) + "\n"
