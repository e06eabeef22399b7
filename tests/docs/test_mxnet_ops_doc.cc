// docs/mxnet-operators.md: which Apache MXNet 1.x operator names (the
// committed list docs/mxnet-1.x-operators.txt) mxc has, as operators or
// aliases, and which it lacks, rendered from the registry through the
// public API. The test fails when the committed file differs from what the
// registry gives now; run under `bazel run` (which sets
// BUILD_WORKSPACE_DIRECTORY) it rewrites the file instead.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

const char kList[] = "docs/mxnet-1.x-operators.txt";
const char kDoc[] = "docs/mxnet-operators.md";

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The names of the list: one per line, '#' starts a comment line.
std::vector<std::string> mxnet_names(const std::string &text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') v.push_back(line);
  }
  return v;
}

// mxc's operator for a name, or "" when it has none.
std::string mxc_name_of(const std::string &name) {
  mxc_op op;
  if (mxc_op_find(name.c_str(), &op) != MXC_OK) return "";
  const char *n = nullptr;
  mxc_op_name(op, &n);
  return n ? n : "";
}

std::string render(const std::vector<std::string> &names) {
  std::ostringstream present, missing, extra;
  std::set<std::string> covered, listed(names.begin(), names.end());
  int n_present = 0;
  for (const auto &name : names) {
    std::string m = mxc_name_of(name);
    if (m.empty()) {
      missing << "- `" << name << "`\n";
      continue;
    }
    ++n_present;
    covered.insert(m);
    present << "| `" << name << "` | `" << m << "` |\n";
  }
  int n_ops = 0;
  mxc_op_count(&n_ops);
  for (int i = 0; i < n_ops; ++i) {
    mxc_op op;
    const char *n = nullptr;
    if (mxc_op_at(i, &op) != MXC_OK || mxc_op_name(op, &n) != MXC_OK) continue;
    if (!covered.count(n) && !listed.count(n)) extra << "- `" << n << "`\n";
  }
  std::ostringstream doc;
  doc << "# MXNet 1.x operators in mxc\n\n"
      << "Generated; do not edit. After adding operators or aliases, run\n\n"
      << "    bazel run //tests/docs:test_mxnet_ops_doc\n\n"
      << "which rewrites this file from `" << kList << "` (Apache MXNet's\n"
      << "operator names, see its header for the source) and mxc's operator\n"
      << "registry; `bazel test //tests/docs:test_mxnet_ops_doc` fails while\n"
      << "the file is stale.\n\n"
      << n_present << " of " << names.size()
      << " MXNet names exist in mxc, as operators or aliases (MXNet's\n"
      << "own names are often aliases in mxc: `elemwise_add` and `_Plus`\n"
      << "are `add`). A graph file naming any of them loads.\n\n"
      << "## Present\n\n| MXNet name | mxc operator |\n|---|---|\n"
      << present.str() << "\n## Missing\n\n" << missing.str()
      << "\n## mxc operators under no MXNet 1.x name of the list\n\n"
      << extra.str();
  return doc.str();
}

TEST(MxnetOpsDoc, CommittedDocIsCurrent) {
  std::string list = slurp(kList);
  ASSERT_FALSE(list.empty()) << "cannot read " << kList;
  std::string doc = render(mxnet_names(list));
  const char *ws = getenv("BUILD_WORKSPACE_DIRECTORY");
  if (ws && *ws) {
    std::string path = std::string(ws) + "/" + kDoc;
    std::ofstream(path, std::ios::binary) << doc;
    printf("wrote %s\n", path.c_str());
    return;
  }
  EXPECT_TRUE(slurp(kDoc) == doc)
      << kDoc << " is stale: run `bazel run //tests/docs:test_mxnet_ops_doc`";
}

}  // namespace
