# Sourced by shell tests (bash) that can skip. Bazel 4 has no skipped
# status: a test that exits 0 is PASSED. So a test that cannot run says so
# in three places a reader or a tool looks:
#   - a line `SKIPPED: REASON` in its log (scripts/test.sh lists every
#     test.log holding one after each pass);
#   - $XML_OUTPUT_FILE, Bazel's test.xml, with one <skipped/> test case
#     (Bazel writes a PASSED one itself when the test writes none);
#   - exit status 0, since a missing optional tool is not a failure.
#
#   mxc_test_skip REASON    prints, writes the XML and exits 0.

mxc__xml_escape() {
  local s=$1
  s=${s//&/&amp;}
  s=${s//</&lt;}
  s=${s//>/&gt;}
  s=${s//\"/&quot;}
  printf '%s' "$s"
}

mxc_test_skip() {
  local reason name
  reason=$(mxc__xml_escape "$1")
  name=$(mxc__xml_escape "${TEST_TARGET:-$0}")
  echo "SKIPPED: $1"
  if [ -n "${XML_OUTPUT_FILE:-}" ]; then
    cat >"$XML_OUTPUT_FILE" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1">
  <testsuite name="$name" tests="1" failures="0" errors="0" skipped="1">
    <testcase name="$name" classname="$name" status="notrun">
      <skipped message="$reason"/>
    </testcase>
  </testsuite>
</testsuites>
EOF
  fi
  exit 0
}
