"""Build macros shared by mxc targets."""

load("//tools:copts.bzl", "MXC_COPTS", "MXC_TEST_COPTS")

def mxc_cc_test(name, srcs, deps = [], copts = [], **kwargs):
    """A GoogleTest test linked statically against the internal libraries.

    Static linking matters: library code is compiled with
    -fvisibility=hidden, so a dynamically linked test would not see the
    internal mxc__ functions it exercises."""
    native.cc_test(
        name = name,
        srcs = srcs,
        copts = MXC_TEST_COPTS + copts,
        linkstatic = True,
        deps = deps + ["@system_gtest//:gtest_main"],
        **kwargs
    )

def mxc_cc_binary(name, srcs, deps = [], copts = [], **kwargs):
    """A C program (benchmark, example) linked statically."""
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = MXC_COPTS + copts,
        linkstatic = True,
        deps = deps,
        **kwargs
    )
