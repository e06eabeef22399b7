"""Compiler options shared by every mxc target."""

MXC_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Wno-unused-parameter",
]

MXC_TEST_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
]
