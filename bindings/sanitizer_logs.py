#!/usr/bin/env python3
"""Reads the sanitizer reports a bindings test left in a directory (the
runtimes write one file per process through log_path; see
bindings/sanitizer.sh) and decides whether they fail the test.

    sanitizer_logs.py DIR

- Any report other than a leak report (an ASan error, a TSan warning, a
  LeakSanitizer fatal error: the leak check could not run) fails.
- A leak report fails when one of its leaks was allocated by mxc's code:
  the first frame below the allocator interceptor lies in an mxc module
  (libmxc.so*, the JNI library libmxc_jni*.so, the R package's mxc.so).
  Leaks the host runtime allocated itself (CPython, the JVM, R, and the
  tools R CMD check runs) are summarized and ignored: they free nothing
  at exit by design. A leak that mxc allocated is mxc's or its binding's
  whoever called it, so this does not hide leaks made through the glue.

Frames must carry their module (the stack_trace_format that
bindings/sanitizer.sh sets appends <MODULE> to every frame). Exit status 1
when the reports fail the test; every failing file is printed whole, and
where the runtime did not symbolize (symbolize=0, set for the JVM) the
frames in mxc's modules get addr2line's function and line appended.
"""
import collections
import os
import re
import subprocess
import sys

OURS = re.compile(r"(^|/)(libmxc[^/]*\.so[^/]*|mxc\.so)$")
RUNTIME = re.compile(r"(^|/)lib(asan|lsan|ubsan|tsan)\.so")
FRAME = re.compile(r"^\s+#(\d+) .*<([^<>]*)>\s*$")
LEAK = re.compile(r"^(Direct|Indirect) leak of (\d+) byte")


RAW = re.compile(r"\(([^()\s]+)\+(0x[0-9a-f]+)\)\s*<[^<>]*>\s*$")


def symbolize(line):
    """line, plus addr2line's answer for a raw frame in an mxc module."""
    m = RAW.search(line)
    if not m or not OURS.search(m.group(1)) or not os.path.exists(m.group(1)):
        return line
    try:
        out = subprocess.run(["addr2line", "-f", "-i", "-C", "-e", m.group(1),
                              m.group(2)], capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return line
    return line + "  [" + " ".join(out) + "]"


def leak_records(text):
    """Yields (kind, bytes, [module of each frame]) per leak record."""
    record = None
    for line in text.splitlines():
        m = LEAK.match(line)
        if m:
            if record:
                yield record
            record = (m.group(1), int(m.group(2)), [])
            continue
        f = FRAME.match(line)
        if f and record:
            record[2].append(f.group(2))
        elif not line.strip() and record:
            yield record
            record = None
    if record:
        yield record


def allocating_module(modules):
    """The module of the first frame outside the sanitizer runtime."""
    for mod in modules:
        if not RUNTIME.search(mod):
            return mod
    return "<none>"


def is_leak_only(text):
    errors = re.findall(r"==\d+==ERROR: (\w+)", text)
    warnings = re.findall(r"WARNING: ThreadSanitizer", text)
    fatal = "has encountered a fatal error" in text
    return not fatal and not warnings and all(e == "LeakSanitizer" for e in errors)


def check_file(path, runtime_leaks):
    """True when the file fails the test (it is printed then)."""
    with open(path, errors="replace") as f:
        text = f.read()
    if not text.strip():
        return False
    ours = []
    if is_leak_only(text):
        for kind, size, modules in leak_records(text):
            mod = allocating_module(modules)
            if OURS.search(mod):
                ours.append((kind, size, mod))
            else:
                runtime_leaks[os.path.basename(mod)] += size
        if not ours:
            return False
    print("=== sanitizer report %s ===" % path)
    print("\n".join(symbolize(line) for line in text.splitlines()))
    for kind, size, mod in ours:
        print("mxc leak: %s, %d bytes, allocated in %s" % (kind, size, mod))
    return True


def main():
    logs = sys.argv[1]
    runtime_leaks = collections.Counter()
    failed = 0
    names = sorted(os.listdir(logs)) if os.path.isdir(logs) else []
    for name in names:
        failed += check_file(os.path.join(logs, name), runtime_leaks)
    if runtime_leaks:
        top = ", ".join("%s %d B" % kv for kv in runtime_leaks.most_common(6))
        print("sanitizer: leaks allocated by the host runtime, ignored: " + top)
    print("sanitizer: %d report file(s), %d failing" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
