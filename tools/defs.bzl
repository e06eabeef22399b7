"""Build macros shared by mxc targets."""

load("//tools:copts.bzl", "MXC_COPTS", "MXC_TEST_COPTS")

def _objs_name(srcs, key):
    """The name of the library holding a test's compiled sources: the first
    source's stem and a hash of everything that affects compilation."""
    stem = srcs[0].split(":")[-1].split("/")[-1].rsplit(".", 1)[0]
    h = hash(key)
    return "_%s_objs_%d" % (stem, h if h >= 0 else -h)

def mxc_cc_test(name, srcs, deps = [], copts = [], **kwargs):
    """A GoogleTest test linked statically against the internal libraries.

    Static linking matters: library code is compiled with
    -fvisibility=hidden, so a dynamically linked test would not see the
    internal mxc__ functions it exercises.

    The sources are compiled once into a test-only library (alwayslink,
    so every TEST registration is kept) that the test links. Tests of one
    package with the same sources, options and dependencies (the `_naive`
    engine variants, one binary run under several environments) share that
    library instead of compiling the same file again: 41 sources were
    compiled twice to four times per configuration (2026-11-29), by
    estimate 9 minutes of a CI run on 2 cores over its three
    configurations."""
    if not srcs:
        native.cc_test(
            name = name,
            srcs = [],
            copts = MXC_TEST_COPTS + copts,
            linkstatic = True,
            deps = deps + ["@system_gtest//:gtest_main"],
            **kwargs
        )
        return
    objs = _objs_name(srcs, repr([srcs, copts, deps]))
    if native.existing_rule(objs) == None:
        native.cc_library(
            name = objs,
            srcs = srcs,
            copts = MXC_TEST_COPTS + copts,
            linkstatic = True,
            alwayslink = True,
            testonly = True,
            deps = deps + [
                d
                for d in ["@system_gtest//:gtest"]
                if d not in deps
            ],
        )
    native.cc_test(
        name = name,
        srcs = [],
        linkstatic = True,
        deps = [":" + objs, "@system_gtest//:gtest_main"],
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
