#!/usr/bin/env python3
"""Self-test of check_layers.py: allowed includes pass; upward and
sideways ones, in each spelling, fail with a message naming the rule."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402


class CheckLayersTest(unittest.TestCase):

    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)

    def write(self, path, *includes):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write("/* test */\n")
            for inc in includes:
                f.write("#include %s\n" % inc)
            f.write("int x;\n")
        return path

    def violations(self, path, *includes):
        return check_layers.check_file(self.root, self.write(path, *includes))

    def assertFails(self, path, include, pkg):
        errs = self.violations(path, include)
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("%s:2 includes " % path, errs[0])
        self.assertIn(": %s may include only " % pkg, errs[0])

    def test_downward_includes_pass(self):
        self.write("core/op/op.h")
        self.assertEqual(self.violations(
            "core/graph/g.c", '"core/graph/graph.h"', '"core/op/op.h"',
            '"core/base/error.h"', '"mxc/mxc.h"', "<stdio.h>"), [])
        self.assertEqual(self.violations(
            "core/exec/e.c", '"core/fuse/fuse.h"', '"core/graph/graph.h"'), [])
        self.assertEqual(self.violations(
            "ops/nn/a.c", '"ops/nn/nn.h"', '"ops/families.h"',
            '"core/op/op.h"', '"core/resource/random.h"'), [])
        self.assertEqual(self.violations(
            "c_api/src/api_x.c", '"api_internal.h"', '"core/exec/executor.h"',
            '"core/train/init.h"'), [])
        self.assertEqual(self.violations("core/base/error.h", '"mxc/mxc.h"'),
                         [])

    def test_upward_include_fails(self):
        self.assertFails("core/engine/e.c", '"core/ndarray/ndarray.h"',
                         "core/engine")
        self.assertFails("core/base/b.c", '"core/storage/storage.h"',
                         "core/base")
        self.assertFails("core/op/o.c", '"core/graph/graph.h"', "core/op")

    def test_core_never_includes_ops_c_api_or_bindings(self):
        self.assertFails("core/graph/x.c", '"ops/nn/nn.h"', "core/graph")
        self.assertFails("core/op/x.c", '"ops/families.h"', "core/op")
        self.assertFails("core/base/x.c", '"c_api/src/api_internal.h"',
                         "core/base")
        self.assertFails("core/exec/x.c", '"bindings/swig/mxcb.h"',
                         "core/exec")

    def test_sideways_includes_fail(self):
        self.assertFails("core/io/x.c", '"core/exec/executor.h"', "core/io")
        self.assertFails("core/fuse/x.c", '"core/exec/executor.h"',
                         "core/fuse")
        self.assertFails("core/graph/x.c", '"core/autograd/autograd.h"',
                         "core/graph")
        self.assertFails("ops/nn/a.c", '"ops/sparse/sparse.h"', "ops/nn")
        self.assertFails("ops/nn/a.c", '"core/graph/graph.h"', "ops/nn")
        self.assertFails("ops/fused/a.c", '"core/fuse/fuse.h"', "ops/fused")

    def test_public_header_stands_alone(self):
        self.assertFails("c_api/include/mxc/mxc.h", '"core/base/error.h"',
                         "mxc")

    def test_other_spellings_are_caught(self):
        self.assertFails("core/base/x.c", "<core/engine/engine.h>",
                         "core/base")
        self.write("core/engine/engine.h")
        self.assertFails("core/base/x.c", '"../engine/engine.h"', "core/base")
        self.assertFails("core/base/x.c", '"tests/testutil/util.h"',
                         "core/base")

    def test_unknown_package_fails(self):
        errs = self.violations("core/newpkg/x.c", '"core/base/error.h"')
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("no entry in the layering rules", errs[0])

    def test_main_exit_status(self):
        self.write("core/engine/e.c", '"core/base/error.h"')
        self.write("ops/nn/a.c", '"core/op/op.h"')
        self.assertEqual(check_layers.main(["--root", self.root]), 0)
        self.write("core/engine/bad.c", '"core/op/op.h"')
        self.assertEqual(check_layers.main(["--root", self.root]), 1)


if __name__ == "__main__":
    unittest.main()
