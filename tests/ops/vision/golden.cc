#include "tests/ops/vision/golden.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace vist {
namespace {

Tensor parse_tensor(std::istringstream &ls) {
  Tensor t;
  int nd = 0;
  ls >> nd;
  t.shape.resize(nd);
  for (auto &d : t.shape) ls >> d;
  std::string tok;
  ls >> tok;  // ":"
  // strtod, not >>: the values include "inf".
  while (ls >> tok) t.v.push_back(std::strtod(tok.c_str(), nullptr));
  EXPECT_EQ(static_cast<int64_t>(t.v.size()), mxct::numel(t.shape));
  return t;
}

std::vector<Case> load(const std::string &path) {
  std::vector<Case> all;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::string line;
  Case c;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "case") {
      c = Case();
      ls >> c.name >> c.op;
    } else if (tag == "param") {
      std::string k, v;
      ls >> k >> v;
      c.params.push_back({k, v});
    } else if (tag == "in" || tag == "out") {
      (tag == "in" ? c.in : c.out).push_back(parse_tensor(ls));
    } else if (tag == "end") {
      all.push_back(c);
    }
  }
  return all;
}

}  // namespace

const char *const kVisionGolden = "tests/ops/vision/vision_golden.txt";

const std::vector<Case> &golden(const std::string &file) {
  // Tests run their cases from one thread; the cache needs no lock.
  static std::map<std::string, std::vector<Case>> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, load(file)).first;
  return it->second;
}

std::vector<Case> cases_of(const std::string &op, const std::string &file) {
  std::vector<Case> r;
  for (const auto &c : golden(file))
    if (c.op == op) r.push_back(c);
  EXPECT_FALSE(r.empty()) << "no golden cases for " << op;
  return r;
}

void run_case(const Case &c, int dtype, double rtol, double atol) {
  SCOPED_TRACE(c.name + " dtype " + std::to_string(dtype));
  std::vector<mxct::Arr> ins;
  for (const auto &t : c.in) ins.push_back(mxct::make(t.shape, t.v, dtype));
  std::vector<const mxct::Arr *> ptrs;
  for (const auto &a : ins) ptrs.push_back(&a);
  int rc = -1;
  auto outs = mxct::invoke(c.op, ptrs, c.params, &rc);
  ASSERT_EQ(rc, MXC_OK) << mxct::err();
  ASSERT_EQ(outs.size(), c.out.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    EXPECT_EQ(outs[k].shape(), c.out[k].shape) << "output " << k;
    auto got = mxct::read(outs[k]);
    ASSERT_EQ(got.size(), c.out[k].v.size());
    for (size_t i = 0; i < got.size(); ++i) {
      double want = c.out[k].v[i];
      if (std::isinf(want)) {
        ASSERT_EQ(got[i], want) << "output " << k << " element " << i;
        continue;
      }
      ASSERT_NEAR(got[i], want, atol + rtol * std::fabs(want))
          << "output " << k << " element " << i;
    }
  }
}

}  // namespace vist
