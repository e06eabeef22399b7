// Shared by the predictor tests: the model scripts/make_predictor_model.py
// writes (a checkpoint, inputs and the numpy forward's outputs) and the
// shared directory of real MXNet models.
#ifndef MXC_TESTS_PREDICT_PREDICT_UTIL_H_
#define MXC_TESTS_PREDICT_PREDICT_UTIL_H_

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/mxnet_models.h"

namespace pred_test {

inline std::string err() { return mxc_last_error(); }

inline const std::string kDir = "tests/predict/model";
inline const std::string kPrefix = kDir + "/model";

inline std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline std::vector<float> read_floats(const std::string &path) {
  std::string s = read_text(path);
  std::vector<float> v(s.size() / sizeof(float));
  if (!v.empty()) memcpy(v.data(), s.data(), v.size() * sizeof(float));
  return v;
}

// The script's model: "BATCH C H W CLASSES".
struct Model {
  int batch = 0, c = 0, h = 0, w = 0, classes = 0;
  std::string json, params;
  std::vector<float> input, expected;
  int64_t image() const { return (int64_t)c * h * w; }
};

inline Model load_model() {
  Model m;
  std::ifstream meta(kDir + "/meta.txt");
  meta >> m.batch >> m.c >> m.h >> m.w >> m.classes;
  m.json = read_text(kPrefix + "-symbol.json");
  m.params = read_text(kPrefix + "-0000.params");
  m.input = read_floats(kDir + "/input.f32");
  m.expected = read_floats(kDir + "/expected.f32");
  return m;
}

// A predictor of the script's model for `batch` images from the bytes.
inline int create(const Model &m, int batch, mxc_predictor *out) {
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {batch, m.c, m.h, m.w};
  return mxc_predictor_create(m.json.c_str(), m.params.data(), m.params.size(),
                              MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                              nullptr, 0, nullptr, out);
}

// Runs p on images [first, first + batch) of the model's input and
// returns the outputs (empty on failure).
inline std::vector<float> run(mxc_predictor p, const Model &m, int first,
                              int batch) {
  const float *x = m.input.data() + first * m.image();
  if (mxc_predictor_set_input(p, "data", x,
                              (size_t)(batch * m.image()) * sizeof(float)) !=
          MXC_OK ||
      mxc_predictor_forward(p) != MXC_OK) {
    return {};
  }
  std::vector<float> y((size_t)batch * m.classes);
  if (mxc_predictor_get_output(p, 0, y.data(), y.size() * sizeof(float)) !=
      MXC_OK) {
    return {};
  }
  return y;
}

inline double max_diff(const float *a, const float *b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) d = std::fmax(d, std::fabs(a[i] - b[i]));
  return d;
}

inline bool readable(const std::string &p) {
  return access(p.c_str(), R_OK) == 0;
}

// The shared real MXNet files (tests/testutil/mxnet_models.h).
inline std::string models_dir() {
  return mxct::mxnet_models_dir("scripts/make_mxnet_params.py");
}

inline std::string fashion_mnist_dir() {
  const char *env = getenv("MXC_FASHION_MNIST");
  return env && *env ? env : "/usr/share/datasets/fashion-mnist";
}

}  // namespace pred_test

#endif  // MXC_TESTS_PREDICT_PREDICT_UTIL_H_
