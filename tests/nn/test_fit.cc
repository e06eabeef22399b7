// fit() through the public C API, each claim against an independent check:
//  - a small classifier trained by mxc_fit_run reaches its accuracy goal,
//    and the listeners see the documented events and values;
//  - a run checkpointed after epoch 2 and resumed in fresh blocks ends with
//    the same parameters as an uninterrupted 4-epoch run, bit for bit
//    (with Dropout, so the random stream's position is part of it);
//  - learning-rate schedules give the formula's rate at every update;
//  - early stopping stops after `patience` epochs without improvement;
//  - the CSV log has a header and one row per epoch matching the values;
//  - bad keys, checkpoints of another network and missing files are
//    refused without changing anything;
//  - a fit through a "local" store (mxc_fit_set_kvstore, one worker)
//    trains exactly as without one, the store outliving its handle; a
//    second fit on the same store is refused naming the key (the 2- and
//    3-rank cases are tests/kvstore:test_dist_train_*).
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

#define OK(x) ASSERT_EQ((x), MXC_OK) << mxc_last_error()

std::string tmp_path(const std::string &name) {
  const char *dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Three classes in 4-d: class c has feature c large. 60 rows.
void write_data(const std::string &data, const std::string &labels, int rows,
                int shift) {
  std::ofstream d(data), l(labels);
  for (int i = 0; i < rows; ++i) {
    int c = (i + shift) % 3;
    for (int j = 0; j < 4; ++j) {
      double v = (j == c ? 1.5 : -0.5) + 0.3 * std::sin(1.3 * i + j + shift);
      d << (j ? "," : "") << v;
    }
    d << "\n";
    l << c << "\n";
  }
}

mxc_data_iter csv_iter(const std::string &data, const std::string &labels,
                       int64_t batch) {
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_csv_create(data.c_str(), labels.c_str(), 0, batch, 0,
                                     -1, MXC_LAST_BATCH_PAD, &it),
            MXC_OK)
      << mxc_last_error();
  return it;
}

mxc_block make(const char *kind, std::vector<const char *> kv, const char *name) {
  std::vector<const char *> k, v;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) k.push_back(kv[i]), v.push_back(kv[i + 1]);
  mxc_block b = nullptr;
  EXPECT_EQ(mxc_block_create(kind, name, k.data(), v.data(), (int)k.size(), &b),
            MXC_OK)
      << mxc_last_error();
  return b;
}

struct Model {
  mxc_block net = nullptr, loss = nullptr;
  mxc_optimizer opt = nullptr;
  mxc_fit fit = nullptr;
  ~Model() {
    mxc_fit_free(fit);
    mxc_optimizer_free(opt);
    mxc_block_free(net);
    mxc_block_free(loss);
  }
};

// A user block running its child 0: the same network behind a forward
// function (traced when hybridized).
int run_child(void *, mxc_block self, int n_in, const mxc_ndarray *in,
              mxc_ndarray *out) {
  mxc_block c = nullptr;
  int rc = mxc_block_child(self, 0, &c);
  if (rc == MXC_OK) rc = mxc_block_forward(c, n_in, in, out);
  mxc_block_free(c);
  return rc;
}

// dense(16, relu) -> dropout -> dense(3); names fixed so that checkpoints
// of one model fit another. wrap: inside a user block.
void build(Model *m, std::vector<const char *> fit_kv, double dropout = 0.2,
           bool wrap = false) {
  mxc_block seq = make("sequential", {}, "net");
  std::string rate = std::to_string(dropout);
  mxc_block layers[] = {make("dense", {"units", "16", "activation", "relu"}, "h"),
                        make("dropout", {"rate", rate.c_str()}, "dr"),
                        make("dense", {"units", "3"}, "o")};
  for (mxc_block l : layers) {
    ASSERT_EQ(mxc_block_add(seq, l), MXC_OK);
    mxc_block_free(l);
  }
  m->net = seq;
  if (wrap) {
    OK(mxc_block_create_user("user", run_child, nullptr, nullptr, &m->net));
    OK(mxc_block_add(m->net, seq));
    mxc_block_free(seq);
  }
  OK(mxc_block_initialize(m->net, "xavier", nullptr, nullptr, 0, 0));
  m->loss = make("softmax_cross_entropy_loss", {}, "loss");
  const char *k[] = {"lr", "momentum", "wd"}, *v[] = {"0.2", "0.9", "1e-4"};
  OK(mxc_optimizer_create(m->net, "sgd_mom_update", k, v, 3, &m->opt));
  std::vector<const char *> fk, fv;
  for (size_t i = 0; i + 1 < fit_kv.size(); i += 2) fk.push_back(fit_kv[i]), fv.push_back(fit_kv[i + 1]);
  OK(mxc_fit_create(m->net, m->loss, m->opt, fk.data(), fv.data(), (int)fk.size(),
                    &m->fit));
}

std::vector<float> all_params(mxc_block b) {
  int n = 0;
  EXPECT_EQ(mxc_block_num_params(b, &n), MXC_OK);
  std::vector<float> out;
  for (int i = 0; i < n; ++i) {
    mxc_ndarray p = nullptr;
    EXPECT_EQ(mxc_block_param(b, i, &p), MXC_OK) << mxc_last_error();
    int64_t size = 0;
    mxc_ndarray_size(p, &size);
    std::vector<float> v((size_t)size);
    EXPECT_EQ(mxc_ndarray_copy_to_host(p, v.data(), v.size() * 4), MXC_OK);
    out.insert(out.end(), v.begin(), v.end());
    mxc_ndarray_free(p);
  }
  return out;
}

struct Seen {
  int batches = 0, epochs = 0, ends = 0;
  std::vector<double> lrs, val_acc, train_loss;
  int stop_after = -1;
};

int record(void *ud, int event, mxc_fit fit) {
  Seen *s = static_cast<Seen *>(ud);
  double v = 0;
  if (event == MXC_FIT_BATCH_END) {
    s->batches++;
    mxc_fit_value(fit, "lr", &v);
    s->lrs.push_back(v);
  } else if (event == MXC_FIT_EPOCH_END) {
    s->epochs++;
    mxc_fit_value(fit, "val_accuracy", &v);
    s->val_acc.push_back(v);
    mxc_fit_value(fit, "train_loss", &v);
    s->train_loss.push_back(v);
    if (s->epochs == s->stop_after) mxc_fit_stop(fit);
  } else if (event == MXC_FIT_TRAIN_END) {
    s->ends++;
  }
  return MXC_OK;
}

struct Data {
  std::string d = tmp_path("fit_d.csv"), l = tmp_path("fit_l.csv");
  std::string vd = tmp_path("fit_vd.csv"), vl = tmp_path("fit_vl.csv");
  Data() {
    write_data(d, l, 60, 0);
    write_data(vd, vl, 30, 1);
  }
};

TEST(Fit, ReachesTheAccuracyGoalAndTellsListeners) {
  Data data;
  mxc_data_iter train = csv_iter(data.d, data.l, 8), val = csv_iter(data.vd, data.vl, 8);
  OK(mxc_random_seed(11));
  Model m;
  build(&m, {"epochs", "8", "progress", "0"});
  Seen seen;
  OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
  OK(mxc_fit_run(m.fit, train, val));
  EXPECT_EQ(seen.epochs, 8);
  EXPECT_EQ(seen.batches, 8 * 8);  // 60 rows in batches of 8, the last padded
  EXPECT_EQ(seen.ends, 1);
  EXPECT_GE(seen.val_acc.back(), 0.95);
  EXPECT_LT(seen.train_loss.back(), seen.train_loss.front());
  double v = 0;
  OK(mxc_fit_value(m.fit, "epoch", &v));
  EXPECT_EQ(v, 8);
  OK(mxc_fit_value(m.fit, "num_update", &v));
  EXPECT_EQ(v, 64);
  EXPECT_EQ(mxc_fit_value(m.fit, "nonsense", &v), MXC_ERR_NOT_FOUND);
  mxc_data_iter_free(train);
  mxc_data_iter_free(val);
}

TEST(Fit, ResumedRunEqualsUninterruptedBitForBit) {
  Data data;
  std::vector<float> whole, resumed;
  {
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    OK(mxc_random_seed(5));
    Model m;
    build(&m, {"epochs", "4", "progress", "0"});
    OK(mxc_fit_run(m.fit, train, nullptr));
    whole = all_params(m.net);
    mxc_data_iter_free(train);
  }
  std::string prefix = tmp_path("resume");
  {
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    OK(mxc_random_seed(5));
    Model m;
    build(&m, {"epochs", "2", "progress", "0", "checkpoint_prefix", prefix.c_str()});
    OK(mxc_fit_run(m.fit, train, nullptr));
    mxc_data_iter_free(train);
  }
  {
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    OK(mxc_random_seed(999));  // the checkpoint restores the stream
    Model m;
    std::string ckpt = prefix + "-0002.fit";
    build(&m, {"epochs", "4", "progress", "0", "resume", ckpt.c_str()});
    OK(mxc_fit_run(m.fit, train, nullptr));
    double epoch = 0;
    OK(mxc_fit_value(m.fit, "epoch", &epoch));
    EXPECT_EQ(epoch, 4);
    resumed = all_params(m.net);
    mxc_data_iter_free(train);
  }
  ASSERT_EQ(whole.size(), resumed.size());
  ASSERT_FALSE(whole.empty());
  EXPECT_EQ(0, memcmp(whole.data(), resumed.data(), whole.size() * 4));
}

// A hybridized network trains through its executor (the graph bound with
// the parameters' gradient buffers; the loss's gradient as head
// gradient): the losses, accuracies and parameters equal those of the
// imperative run up to float reordering, for built-in layers and for a
// user block (a traced graph). No dropout: the executor's random draws
// would differ.
TEST(Fit, HybridizedTrainingEqualsImperative) {
  Data data;
  std::vector<Seen> seen(3);
  std::vector<std::vector<float>> params(3);
  for (int run = 0; run < 3; ++run) {
    mxc_data_iter train = csv_iter(data.d, data.l, 8), val = csv_iter(data.vd, data.vl, 8);
    OK(mxc_random_seed(21));
    Model m;
    build(&m, {"epochs", "4", "progress", "0"}, 0.0, run == 2);
    if (run > 0) {
      OK(mxc_block_hybridize(m.net, 1));
    }
    OK(mxc_fit_add_listener(m.fit, record, &seen[run], nullptr));
    OK(mxc_fit_run(m.fit, train, val));
    params[run] = all_params(m.net);
    mxc_data_iter_free(train);
    mxc_data_iter_free(val);
  }
  for (int run = 1; run < 3; ++run) {
    ASSERT_EQ(seen[run].train_loss.size(), 4u);
    for (size_t e = 0; e < 4; ++e) {
      EXPECT_NEAR(seen[run].train_loss[e], seen[0].train_loss[e], 1e-5) << run;
      EXPECT_EQ(seen[run].val_acc[e], seen[0].val_acc[e]) << run;
    }
    ASSERT_EQ(params[run].size(), params[0].size());
    for (size_t i = 0; i < params[0].size(); ++i) {
      EXPECT_NEAR(params[run][i], params[0][i], 1e-4) << run << " " << i;
    }
  }
  EXPECT_LT(seen[0].train_loss.back(), seen[0].train_loss.front());
}

TEST(Fit, SchedulesGiveTheFormulasRate) {
  Data data;
  struct Case {
    std::vector<const char *> kv;
    double (*rate)(int k);
  } cases[] = {
      {{"lr_scheduler", "factor", "step", "5", "factor", "0.5"},
       [](int k) { return 0.2 * std::pow(0.5, k / 5); }},
      {{"lr_scheduler", "multifactor", "steps", "(3,10)", "factor", "0.1"},
       [](int k) { return 0.2 * std::pow(0.1, (k >= 3) + (k >= 10)); }},
      {{"lr_scheduler", "cosine", "max_update", "12", "final_lr", "0.01"},
       [](int k) {
         return k >= 12 ? 0.01
                        : 0.01 + (0.2 - 0.01) * (1 + std::cos(M_PI * k / 12)) / 2;
       }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.kv[1]);
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    Model m;
    std::vector<const char *> kv = c.kv;
    kv.insert(kv.end(), {"epochs", "2", "progress", "0"});
    build(&m, kv);
    Seen seen;
    OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
    OK(mxc_fit_run(m.fit, train, nullptr));
    ASSERT_EQ(seen.lrs.size(), 16u);
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(seen.lrs[(size_t)k], c.rate(k), 1e-12) << k;
    mxc_data_iter_free(train);
  }
}

TEST(Fit, EarlyStoppingAndListenerStop) {
  Data data;
  mxc_data_iter train = csv_iter(data.d, data.l, 8);
  // A learning rate of 0 never improves: stops after 1 + patience epochs.
  {
    Model m;
    build(&m, {"epochs", "50", "progress", "0", "monitor", "train_loss",
               "early_stopping_patience", "2", "early_stopping_min_delta", "1e-3"},
          0.0);
    OK(mxc_optimizer_set_lr(m.opt, 0));
    Seen seen;
    OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
    OK(mxc_fit_run(m.fit, train, nullptr));
    EXPECT_EQ(seen.epochs, 3);
  }
  {
    Model m;
    build(&m, {"epochs", "50", "progress", "0"});
    Seen seen;
    seen.stop_after = 2;
    OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
    OK(mxc_fit_run(m.fit, train, nullptr));
    EXPECT_EQ(seen.epochs, 2);
  }
  mxc_data_iter_free(train);
}

TEST(Fit, CsvLogHasOneRowPerEpoch) {
  Data data;
  std::string csv = tmp_path("log.csv");
  mxc_data_iter train = csv_iter(data.d, data.l, 8), val = csv_iter(data.vd, data.vl, 8);
  Model m;
  build(&m, {"epochs", "3", "progress", "0", "csv", csv.c_str()});
  Seen seen;
  OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
  OK(mxc_fit_run(m.fit, train, val));
  std::ifstream f(csv);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line.rfind("epoch,train_loss,train_accuracy,val_loss,val_accuracy,lr", 0), 0u);
  for (int e = 1; e <= 3; ++e) {
    ASSERT_TRUE(std::getline(f, line));
    std::stringstream ss(line);
    std::string cell;
    std::vector<double> cells;
    while (std::getline(ss, cell, ',')) cells.push_back(std::stod(cell));
    ASSERT_EQ(cells.size(), 8u);
    EXPECT_EQ(cells[0], e);
    EXPECT_NEAR(cells[1], seen.train_loss[(size_t)e - 1], 1e-6);
    EXPECT_NEAR(cells[4], seen.val_acc[(size_t)e - 1], 1e-6);
  }
  EXPECT_FALSE(std::getline(f, line));
  mxc_data_iter_free(train);
  mxc_data_iter_free(val);
}

// Output of tests/nn/read_tfevents.py (the independent reader) on path.
int read_events(const std::string &path, std::vector<std::string> *lines) {
  std::string cmd = "python3 tests/nn/read_tfevents.py '" + path + "' 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) {
    std::string l(buf);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    lines->push_back(l);
  }
  return pclose(p);
}

TEST(Fit, TensorBoardEventsReadBackByAnIndependentReader) {
  Data data;
  std::string dir = tmp_path("tb");
  mxc_data_iter train = csv_iter(data.d, data.l, 8), val = csv_iter(data.vd, data.vl, 8);
  Model m;
  build(&m, {"epochs", "3", "progress", "0", "tensorboard", dir.c_str(),
             "lr_scheduler", "factor", "step", "8", "factor", "0.5"});
  Seen seen;
  OK(mxc_fit_add_listener(m.fit, record, &seen, nullptr));
  OK(mxc_fit_run(m.fit, train, val));
  DIR *d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  std::string file;
  for (struct dirent *e; (e = readdir(d));) {
    if (std::string(e->d_name).rfind("events.out.tfevents.", 0) == 0) file = dir + "/" + e->d_name;
  }
  closedir(d);
  ASSERT_FALSE(file.empty());
  std::vector<std::string> lines;
  ASSERT_EQ(read_events(file, &lines), 0) << (lines.empty() ? "" : lines[0]);
  ASSERT_EQ(lines.size(), 1u + 3 * 5);
  EXPECT_EQ(lines[0], "version,brain.Event:2");
  for (int e = 1; e <= 3; ++e) {
    std::map<std::string, double> got;
    for (int i = 0; i < 5; ++i) {
      std::stringstream ss(lines[(size_t)(1 + (e - 1) * 5 + i)]);
      std::string kind, step, tag, value;
      std::getline(ss, kind, ',');
      std::getline(ss, step, ',');
      std::getline(ss, tag, ',');
      std::getline(ss, value, ',');
      EXPECT_EQ(kind, "scalar");
      EXPECT_EQ(step, std::to_string(e));
      got[tag] = std::stod(value);
    }
    EXPECT_NEAR(got["train_loss"], seen.train_loss[(size_t)e - 1], 1e-6);
    EXPECT_NEAR(got["val_accuracy"], seen.val_acc[(size_t)e - 1], 1e-6);
    EXPECT_NEAR(got["lr"], 0.2 * std::pow(0.5, (8 * e - 1) / 8), 1e-7);
  }
  // The reader checks the checksums: one flipped byte is an error.
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes[bytes.size() / 2] ^= 1;
  std::string bad = tmp_path("bad.tfevents");
  std::ofstream(bad, std::ios::binary) << bytes;
  lines.clear();
  EXPECT_NE(read_events(bad, &lines), 0);
  mxc_data_iter_free(train);
  mxc_data_iter_free(val);
}

// What a fit run with `progress` writes to stdout.
std::string progress_output(const char *progress) {
  Data data;
  mxc_data_iter train = csv_iter(data.d, data.l, 8), val = csv_iter(data.vd, data.vl, 8);
  Model m;
  build(&m, {"epochs", "2", "progress", progress});
  std::string path = tmp_path("stdout.txt");
  fflush(stdout);
  int saved = dup(1);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 1);
  close(fd);
  int rc = mxc_fit_run(m.fit, train, val);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  EXPECT_EQ(rc, MXC_OK) << mxc_last_error();
  mxc_data_iter_free(train);
  mxc_data_iter_free(val);
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Fit, ProgressLineOnRequestQuietOtherwise) {
  std::string out = progress_output("1");
  EXPECT_NE(out.find("\repoch 1/2 batch "), std::string::npos) << out;
  // Each epoch's finished line names that epoch (it once said 3/2).
  EXPECT_NE(out.find("\repoch 2/2 batch "), std::string::npos) << out;
  EXPECT_EQ(out.find("epoch 3/2"), std::string::npos) << out;
  EXPECT_NE(out.find("samples/s"), std::string::npos) << out;
  EXPECT_NE(out.find(" loss "), std::string::npos) << out;
  EXPECT_NE(out.find("val_acc "), std::string::npos) << out;
  size_t newlines = 0;
  for (char c : out) newlines += c == '\n';
  EXPECT_EQ(newlines, 2u) << out;  // one finished line per epoch
  EXPECT_EQ(progress_output("0"), "");
  if (!isatty(1)) {
    EXPECT_EQ(progress_output("auto"), "");
  }
}

TEST(Fit, ThroughALocalStoreTrainsAsWithout) {
  Data data;
  std::vector<std::vector<float>> params;
  for (int with_store = 0; with_store < 2; ++with_store) {
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    OK(mxc_random_seed(9));
    Model m;
    build(&m, {"epochs", "2", "progress", "0", "shard_by_rank", "1"});
    if (with_store) {
      mxc_kvstore kv = nullptr;
      OK(mxc_kvstore_create("local", &kv));
      OK(mxc_fit_set_kvstore(m.fit, kv));
      mxc_kvstore_free(kv);  // the fit keeps the store
    }
    OK(mxc_fit_run(m.fit, train, nullptr));
    double v = -1;
    OK(mxc_fit_value(m.fit, "num_workers", &v));
    EXPECT_EQ(v, 1);
    OK(mxc_fit_value(m.fit, "rank", &v));
    EXPECT_EQ(v, 0);
    params.push_back(all_params(m.net));
    mxc_data_iter_free(train);
  }
  EXPECT_EQ(params[0], params[1]);
  // One store, two fits: the second's keys exist already.
  mxc_kvstore kv = nullptr;
  OK(mxc_kvstore_create("local", &kv));
  for (int i = 0; i < 2; ++i) {
    mxc_data_iter train = csv_iter(data.d, data.l, 8);
    Model m;
    build(&m, {"epochs", "1", "progress", "0"});
    OK(mxc_fit_set_kvstore(m.fit, kv));
    int rc = mxc_fit_run(m.fit, train, nullptr);
    if (i == 0) {
      EXPECT_EQ(rc, MXC_OK) << mxc_last_error();
    } else {
      EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(mxc_last_error()).find("key 'fit:h_weight' is already"),
                std::string::npos)
          << mxc_last_error();
    }
    OK(mxc_fit_set_kvstore(m.fit, nullptr));
    mxc_data_iter_free(train);
  }
  mxc_kvstore_free(kv);
}

TEST(Fit, BadInputIsRefused) {
  Data data;
  Model m;
  build(&m, {"progress", "0"});
  mxc_fit f = nullptr;
  for (std::vector<const char *> kv :
       {std::vector<const char *>{"epoch", "3"}, {"epochs", "-1"}, {"epochs", "x"},
        {"progress", "maybe"}, {"lr_scheduler", "step"}, {"lr_scheduler", "factor"},
        {"monitor", "val_f1"}, {"steps", "(5,3)"}, {"shard_by_rank", "2"}}) {
    const char *k[] = {kv[0]}, *v[] = {kv[1]};
    EXPECT_EQ(mxc_fit_create(m.net, m.loss, m.opt, k, v, 1, &f), MXC_ERR_INVALID_ARGUMENT)
        << kv[0] << "=" << kv[1];
  }
  // An optimizer of another block.
  mxc_block other = make("dense", {"units", "2"}, "x");
  mxc_optimizer o2 = nullptr;
  OK(mxc_optimizer_create(other, "sgd_update", nullptr, nullptr, 0, &o2));
  EXPECT_EQ(mxc_fit_create(m.net, m.loss, o2, nullptr, nullptr, 0, &f),
            MXC_ERR_INVALID_ARGUMENT);
  // Checkpoints: missing file, another network's file; nothing changes.
  mxc_data_iter train = csv_iter(data.d, data.l, 8);
  OK(mxc_fit_run(m.fit, train, nullptr));
  std::vector<float> before = all_params(m.net);
  EXPECT_NE(mxc_fit_load_checkpoint(m.fit, tmp_path("nope.fit").c_str()), MXC_OK);
  std::string path = tmp_path("other.fit");
  {
    Model w;  // a wider network under the same names
    w.net = make("sequential", {}, "net");
    mxc_block l1 = make("dense", {"units", "5"}, "h");
    OK(mxc_block_add(w.net, l1));
    mxc_block_free(l1);
    OK(mxc_block_initialize(w.net, "zeros", nullptr, nullptr, 0, 0));
    w.loss = make("l2_loss", {}, "l");
    OK(mxc_optimizer_create(w.net, "sgd_update", nullptr, nullptr, 0, &w.opt));
    OK(mxc_fit_create(w.net, w.loss, w.opt, nullptr, nullptr, 0, &w.fit));
    mxc_ndarray x = nullptr, y = nullptr;
    int64_t s[2] = {1, 4};
    OK(mxc_ndarray_create(s, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &x));
    OK(mxc_init_array(x, "ones", nullptr, nullptr, 0));
    OK(mxc_block_forward(w.net, 1, &x, &y));
    OK(mxc_fit_save_checkpoint(w.fit, path.c_str()));
    mxc_ndarray_free(x);
    mxc_ndarray_free(y);
  }
  EXPECT_EQ(mxc_fit_load_checkpoint(m.fit, path.c_str()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("h_weight"), std::string::npos)
      << mxc_last_error();
  EXPECT_EQ(all_params(m.net), before);
  EXPECT_EQ(mxc_fit_run(m.fit, nullptr, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_fit_add_listener(m.fit, nullptr, nullptr, nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc_optimizer_free(o2);
  mxc_block_free(other);
  mxc_data_iter_free(train);
}

}  // namespace
