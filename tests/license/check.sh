#!/bin/bash
# Checks that the license statements agree (Apache-2.0):
#   check.sh LICENSE GO_LICENSE MXC_JAR R_DESCRIPTION DEBIAN_COPYRIGHT
# The Go module carries a copy of LICENSE (the go tool and pkg.go.dev
# look for one at the module root, and module zips drop symlinks); the jar
# carries one as META-INF/LICENSE. Both must be byte-identical to the top
# one, so an edit to one cannot silently leave the others behind.
set -euo pipefail
license=$1 go_license=$2 jar=$3 description=$4 copyright=$5
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

grep -q '^ *Apache License$' "$license" && grep -q '^ *Version 2.0, January 2004$' "$license" ||
  err "$license is not the Apache License 2.0"
cmp -s "$license" "$go_license" || err "bindings/go/LICENSE differs from LICENSE"
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/license.XXXXXX")
(cd "$tmp" && jar xf "$OLDPWD/$jar" META-INF/LICENSE)
cmp -s "$license" "$tmp/META-INF/LICENSE" || err "mxc.jar's META-INF/LICENSE differs from LICENSE"
# R CMD check accepts only the standard names of its license database.
grep -qx 'License: Apache License (== 2.0)' "$description" ||
  err "$description: License is not 'Apache License (== 2.0)'"
# Debian: every Files paragraph and the stand-alone paragraph say Apache-2.0.
others=$(grep '^License:' "$copyright" | grep -vx 'License: Apache-2.0' || true)
[ -z "$others" ] || err "$copyright names another license: $others"
grep -q '^License: Apache-2.0$' "$copyright" || err "$copyright names no license"
[ $fail = 0 ] && echo "license statements agree (Apache-2.0)"
exit $fail
