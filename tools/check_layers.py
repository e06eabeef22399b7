#!/usr/bin/env python3
"""Checks that library sources include only downwards (the layering rule).

Every package of the library sits in a layer and may include headers of
the packages listed for it below, plus its own. Bazel's BUILD deps alone do
not stop a wrong include (any header of a dependency's dependency is on the
include path), so this reads the #include lines themselves.

Usage: check_layers.py [--root DIR] [FILE...]
  Without FILEs, scans every .c/.h under core/, ops/, backends/ and c_api/ of DIR
  (default: the current directory). Exits 1 with one line per violation.
  The rules: LAYER_RULES in tools/layers.bzl.
"""

import argparse
import ast
import os
import re
import sys

# The rule table lives in tools/layers.bzl (LAYER_RULES), shared with the
# BUILD files' visibility; it is a plain literal, read here as Python.
_RULES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "layers.bzl")


def load_rules(path=_RULES_FILE):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                getattr(node.targets[0], "id", None) == "LAYER_RULES"):
            return ast.literal_eval(node.value)
    raise SystemExit("check_layers: no LAYER_RULES in %s" % path)


RULES = load_rules()

# Top-level directories whose files are checked, and the prefix of the
# public headers' include paths.
_SCANNED = ("core", "ops", "backends", "c_api")
_REPO_TOPS = ("core", "ops", "backends", "c_api", "bindings", "tests", "tools",
              "third_party", "bench", "examples")
_PUBLIC = "c_api/include/mxc"

_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def package_of(path):
    """The rule-table package of a repository-relative path, or None."""
    parts = path.split("/")
    if path.startswith(_PUBLIC + "/"):
        return "mxc"
    if parts[0] in ("core", "ops", "backends", "c_api", "bindings") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] in _REPO_TOPS and len(parts) >= 2:
        return parts[0]
    return None


def rule_for(pkg):
    """The allowed list of pkg (exact entry first, then a wildcard)."""
    if pkg in RULES:
        return RULES[pkg]
    top = pkg.split("/")[0] + "/*"
    if "/" in pkg and top in RULES:
        return RULES[top]
    return None


def allowed(rule, pkg, target):
    if target == pkg:
        return True
    for a in rule:
        if a == target:
            return True
        if a.endswith("/*") and target.startswith(a[:-1]):
            return True
    return False


def resolve(root, src, inc, quoted):
    """Repository-relative path an #include names, or None for a system
    header. Quoted includes are tried next to the including file first,
    as the compiler does; then from the repository root (Bazel's include
    path), where mxc/... is the public header directory."""
    if quoted:
        local = os.path.normpath(os.path.join(os.path.dirname(src), inc))
        if os.path.exists(os.path.join(root, local)):
            return local
    first = inc.split("/")[0]
    if first == "mxc":
        return _PUBLIC + "/" + inc[len("mxc/"):]
    if first in _REPO_TOPS:
        return os.path.normpath(inc)
    if quoted:
        # Not found anywhere: a generated file next to the includer.
        return os.path.normpath(os.path.join(os.path.dirname(src), inc))
    return None


def describe(rule):
    shown = [a if a != "mxc" else "mxc/mxc.h (public)" for a in rule]
    return "its own headers" + (" and " + ", ".join(shown) if shown else "")


def check_file(root, src):
    """Violation messages for one repository-relative source file."""
    pkg = package_of(src)
    rule = rule_for(pkg) if pkg else None
    if rule is None:
        return ["%s: package %s has no entry in the layering rules "
                "(LAYER_RULES in tools/layers.bzl): add one" % (src, pkg)]
    out = []
    with open(os.path.join(root, src), encoding="utf-8",
              errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = _INCLUDE.match(line)
            if not m:
                continue
            target = resolve(root, src, m.group(2), m.group(1) == '"')
            if target is None:
                continue
            tpkg = package_of(target)
            if tpkg is None or allowed(rule, pkg, tpkg):
                continue
            out.append("%s:%d includes %s: %s may include only %s" %
                       (src, lineno, target, pkg, describe(rule)))
    return out


def scan(root):
    files = []
    for top in _SCANNED:
        for dirpath, dirnames, names in os.walk(os.path.join(root, top),
                                                followlinks=True):
            dirnames.sort()
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, n),
                                                 root))
    return files


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    files = args.files or scan(args.root)
    if not files:
        print("check_layers: no sources found under %s" % args.root)
        return 1
    errors = []
    for src in files:
        errors.extend(check_file(args.root, src))
    for e in errors:
        print(e)
    if errors:
        print("check_layers: %d include(s) against the layering rules"
              % len(errors))
        return 1
    print("check_layers: %d files, every include goes downwards" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
