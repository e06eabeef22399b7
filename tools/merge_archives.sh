#!/bin/sh
# Usage: merge_archives.sh OUT.a IN...  Merges the position-independent
# static archives among IN into one archive OUT.a with an index. Bazel lists
# several outputs per cc_library (alwayslink archives are *.lo, PIC ones
# *.pic.lo or *.pic.a, plus a .so); PIC objects are taken so that libmxc.a
# links into the PIE executables Debian builds by default.
set -eu
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Under --force_pic (.bazelrc) every object is PIC and the archives carry
# no .pic in their names: then all archives qualify.
pic='*.pic.lo | *.pic.a'
case " $* " in
  *.pic.lo\ * | *.pic.a\ *) ;;
  *) pic=any ;;
esac
i=0
for f in "$@"; do
  case "$f" in
    *.pic.lo | *.pic.a) ;;
    *.lo | *.a) [ "$pic" = any ] || continue ;;
    *) continue ;;
  esac
  i=$((i + 1))
  mkdir "$tmp/$i"
  (cd "$tmp/$i" && ar x "$OLDPWD/$f")
  # Objects of different archives may share a name: prefix them.
  for o in "$tmp/$i"/*.o; do
    [ -e "$o" ] && mv "$o" "$tmp/$i/a${i}_$(basename "$o")"
  done
done
[ "$i" -gt 0 ] || { echo "merge_archives: no archives among inputs" >&2; exit 1; }
rm -f "$out"
ar rcs "$out" "$tmp"/*/*.o
