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

def mxc_fuzz_target(name, srcs, deps = [], **kwargs):
    """A libFuzzer target (docs/fuzzing.md) and its corpus regression test.

    Under --config=fuzz (clang, libFuzzer, ASan+UBSan) `name` links
    libFuzzer; in every other configuration it links tests/fuzz/driver.c,
    which replays files. `name + "_corpus"` replays the committed corpus,
    tests/fuzz/corpus/<name>/ (seeds and every regression input), in each
    test pass: default, ASan+UBSan and TSan."""
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = MXC_COPTS,
        linkstatic = True,
        linkopts = select({
            "//tests/fuzz:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = deps + ["//tests/fuzz:fuzz_util", "//c_api"] + select({
            "//tests/fuzz:libfuzzer": [],
            "//conditions:default": ["//tests/fuzz:driver"],
        }),
        testonly = True,
        **kwargs
    )
    native.sh_test(
        name = name + "_corpus",
        size = "medium",
        srcs = ["run_corpus.sh"],
        args = ["$(location :%s)" % name, "tests/fuzz/corpus/" + name],
        data = [":" + name] + native.glob(["corpus/%s/**" % name]),
    )
