# Doxygen INPUT_FILTER for c_api/include/mxc/mxc.h. The header's comments
# are plain C comments, written for people reading the header; this turns
# them into Doxygen's without touching the header:
#  - the first comment becomes the file's documentation (@file);
#  - a section banner (a dashed line, a title, a dashed line) opens a
#    group named group_<first two words of the title> (closing the one
#    before), so the reference has a page per section;
#  - a comment starting in column 0 documents the declaration after it;
#    when several declarations follow it with no blank line between them
#    (mxc_op_name and mxc_op_doc under one comment), each later one copies
#    the first one's documentation;
#  - a comment after a #define documents that macro (/**<).
# Line numbers are kept, so Doxygen's warnings point at the header's lines.
function group_id(title,   w, n, i, id, k) {
  n = split(tolower(title), w, /[^a-z0-9]+/)
  id = "group"; k = 0
  for (i = 1; i <= n && k < 2; i++)
    if (w[i] != "") { id = id "_" w[i]; k++ }
  return id
}
function is_decl(line) { return line ~ /^(MXC_API |#define |typedef )/ }
function decl_name(line,   m) {
  if (line ~ /^#define /) { split(line, m, /[ (]/); return m[2] }
  if (match(line, /[A-Za-z_][A-Za-z0-9_]*\(/)) return substr(line, RSTART, RLENGTH - 1)
  return ""
}
# Prints the declarations buffered after a comment. The comment documents
# the first; each later one gets a trailing "@copydoc first" on the line
# that ends it (same line: line numbers stay right).
function flush(   i, first, open_decl) {
  first = ""; open_decl = 0
  for (i = 1; i <= nbuf; i++) {
    if (is_decl(buf[i])) {
      if (first == "") first = decl_name(buf[i])
      else open_decl = 1
    }
    if (open_decl && (buf[i] ~ /^#define / || buf[i] ~ /;[ \t]*$/)) {
      if (buf[i] !~ /\/\*\*</ && first != "") buf[i] = buf[i] " /**< @copydoc " first " */"
      open_decl = 0
    }
    print buf[i]
  }
  nbuf = 0; after_doc = 0
}
function plain(line) {
  if (line ~ /^#define .*\/\* /) sub(/\/\* /, "/**< ", line)
  print line
}
BEGIN { first = 1; open_group = 0; in_doc = 0; after_doc = 0; nbuf = 0 }
{
  line = $0
  if (in_doc) {                 # inside a comment that documents
    print line
    if (line ~ /\*\//) { in_doc = 0; after_doc = 1 }
    next
  }
  if (after_doc) {              # declarations right after a comment
    if (line != "" && line !~ /^\/\*/) {
      if (line ~ /^#define .*\/\* /) sub(/\/\* /, "/**< ", line)
      buf[++nbuf] = line
      next
    }
    flush()
  }
  if (line ~ /^\/\* -+ \*\/$/) {
    if ((getline title) > 0 && (getline closing) > 0 && closing ~ /^\/\* -+ \*\/$/) {
      sub(/^\/\* */, "", title); sub(/ *\*\/$/, "", title)
      print (open_group ? "/** @} */" : "")
      print "/** @defgroup " group_id(title) " " title
      print " *  @{ */"
      open_group = 1
    } else { print line; print title; print closing }
    next
  }
  if (line ~ /^\/\*$/ && first) { line = "/** @file"; first = 0 }
  else if (line ~ /^\/\* /) { first = 0; sub(/^\/\* /, "/** ", line) }
  else { plain(line); next }
  print line
  if (line ~ /\*\//) after_doc = 1; else in_doc = 1
}
END { if (after_doc) flush(); if (open_group) print "/** @} */" }
