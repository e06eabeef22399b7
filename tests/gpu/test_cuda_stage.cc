// The staged copies of backends/cuda/stage.h against a fake asynchronous
// queue (a host thread running each DMA after a random delay, marks
// recorded in order): every size around the chunk boundaries comes out
// byte for byte, to the device and back. A stage that reused a slot
// before its DMA was done, or read a chunk before its mark, copies stale
// bytes here.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "backends/cuda/stage.h"
#include "mxc/mxc.h"

namespace {

// An in-order queue served by one thread, like a CUDA stream.
class Queue {
 public:
  Queue() : t_([this] { Serve(); }) {}
  ~Queue() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    t_.join();
  }
  // Returns the ticket of the item (1, 2, ...).
  long Push(std::function<void()> f) {
    std::lock_guard<std::mutex> lk(mu_);
    q_.push_back(std::move(f));
    cv_.notify_all();
    return ++pushed_;
  }
  void WaitFor(long ticket) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return done_ >= ticket; });
  }

 private:
  void Serve() {
    std::mt19937 g(7);
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;
      std::function<void()> f = q_.front();
      lk.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(g() % 200));
      f();
      lk.lock();
      q_.pop_front();
      done_++;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  long pushed_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread t_;
};

struct Fake {
  Queue q;
  long mark[2] = {0, 0};
};

int Dma(void *ctx, void *dst, const void *src, size_t n, int) {
  static_cast<Fake *>(ctx)->q.Push([=] { std::memcpy(dst, src, n); });
  return MXC_OK;
}
int Mark(void *ctx, int slot) {
  Fake *f = static_cast<Fake *>(ctx);
  f->mark[slot] = f->q.Push([] {});
  return MXC_OK;
}
int Wait(void *ctx, int slot) {
  Fake *f = static_cast<Fake *>(ctx);
  f->q.WaitFor(f->mark[slot]);
  return MXC_OK;
}

TEST(CudaStage, EverySizeRoundTrips) {
  const size_t chunk = 64;
  std::vector<char> s0(chunk), s1(chunk);
  Fake f;
  mxc__stage st = {&f, {s0.data(), s1.data()}, chunk, {0, 0}, Dma, Mark, Wait};
  for (size_t n : {0, 1, 63, 64, 65, 127, 128, 129, 200, 640, 1000, 4099}) {
    std::vector<char> host(n), dev(n, 0), back(n, 0);
    for (size_t i = 0; i < n; ++i) host[i] = (char)(i * 7 + n);
    ASSERT_EQ(mxc__stage_to_device(&st, dev.data(), host.data(), n), MXC_OK);
    // The host side may change at once: the stage copied it already.
    std::vector<char> want = host;
    std::fill(host.begin(), host.end(), 0);
    ASSERT_EQ(mxc__stage_drain(&st), MXC_OK);  // as the stream's sync
    ASSERT_EQ(dev, want) << n << " bytes to the device";
    ASSERT_EQ(mxc__stage_to_host(&st, back.data(), dev.data(), n), MXC_OK);
    ASSERT_EQ(back, want) << n << " bytes to the host";
  }
}

}  // namespace
