"""Compiler options shared by every mxc target."""

MXC_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wstrict-prototypes",
    # C only, like -Wstrict-prototypes: no cc_* target with C++ sources
    # uses MXC_COPTS. A function with external linkage and no prototype in
    # scope is either file-local (make it static), shared (its prototype
    # belongs in an internal header the definition includes) or dead.
    "-Wmissing-prototypes",
    "-Wno-unused-parameter",
]

MXC_TEST_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    # The C++ counterpart (valid for the few C sources too): a test's
    # helper function belongs in an anonymous namespace or is static.
    "-Wmissing-declarations",
    # Test sources only (the library they test keeps its configuration's
    # flags): GoogleTest's macros make every test file heavy to optimize,
    # and at the default -O2 -g the test files were 92% of a CI build's
    # compile time. -O1 -g1 (line tables: all a failure's stack needs) halved
    # the time of each (tests/engine/test_engine.cc: 22 s -> 12.6 s of CPU);
    # -Og (2026-11-29, user CPU of one compile, GCC 12) takes another third
    # to a half off: test_engine.cc 9.3 -> 5.1 s, with ASan 13.6 -> 9.3 s;
    # test_autograd_ops.cc with ASan 10.5 -> 5.4 s, with TSan 5.7 -> 3.9 s.
    # -O0 is barely faster to compile than -Og and leaves the tests' naive
    # reference loops several times slower to run.
    "-Og",
    "-g1",
] + select({
    # Under ASan+UBSan (and the fuzz build, which sets the same define),
    # test sources keep AddressSanitizer but not UBSan's checks: UBSan's
    # instrumentation of GoogleTest's templates made each test file 2.5-3x
    # slower to compile (tests/engine/test_engine.cc: 11 s at -O1 -g1,
    # 13 s with -fsanitize=address, 31 s with address,undefined), and the
    # ASan pass was the largest part of CI. The library and every program
    # it links keep their UBSan checks: undefined behaviour in mxc's C code
    # is what that pass is for, and the test harness calls into it.
    "//tools:asan": ["-fno-sanitize=undefined,float-cast-overflow"],
    "//conditions:default": [],
})

# Kernel packages: GCC's -O2 cost model ("very-cheap") does not vectorize
# loops whose trip count is unknown at compile time, and these kernels need
# it. Clang (the fuzzing build, --config=fuzz) vectorizes them at -O2 and
# does not know the flag.
MXC_KERNEL_COPTS = MXC_COPTS + select({
    "//tools:clang": [],
    "//conditions:default": ["-fvect-cost-model=dynamic"],
})
