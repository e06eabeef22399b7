#!/bin/bash
# Checks the generated API reference: html_test.sh TARBALL WARNINGS ALLOWED
set -euo pipefail
tarball=$1 warnings=$2 allowed=$3
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }
files=$(tar -tzf "$tarball")
for f in index.html mxc_8h.html abi_policy.html modules.html \
  page_ndarray.html page_op.html page_autograd.html page_symbol.html \
  page_executor.html page_data_iter.html page_strings.html \
  group__group__ndarray.html group__group__operators.html group__group__errors.html; do
  grep -qx "html/$f" <<< "$files" || err "html/$f missing"
done
# The front page states the rules; function pages carry the header's text.
# (Pages are read whole: grep -q closing a pipe early would fail tar.)
index=$(tar -xzOf "$tarball" html/index.html)
grep -q "Ownership" <<< "$index" || err "front page lacks the ownership rules"
ndarray=$(tar -xzOf "$tarball" html/group__group__ndarray.html)
grep -q "mxc_ndarray_create" <<< "$ndarray" || err "the NDArray module does not document mxc_ndarray_create"
if ! diff -u <(grep -v "^#" "$allowed") "$warnings"; then
  err "Doxygen's warnings differ from $allowed (- expected, + actual)"
fi
[ $fail = 0 ] && echo "API reference ok: $(grep -c '^html/.*\.html$' <<< "$files") pages," \
  "$(grep -c . "$warnings" || true) known undocumented members"
exit $fail
