// cpp/src/parallel.h: every index runs exactly once at every thread count, exceptions reach the caller, nested and
// concurrent calls fall back to serial work, the pool can be resized between calls, and the kernels that split
// their work over it give bit-identical results at every thread count.
#include "cpp/src/parallel.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attnlab/attention.h"
#include "test_util.h"

namespace {

using attnlab::Shape;

// Restores one thread when a test ends, whatever it set.
struct ThreadCountGuard {
  ~ThreadCountGuard() { attnlab::SetThreadCount(1); }
};

}  // namespace

TEST_CASE("ParallelFor runs every index once, at every thread count", "[parallel]") {
  ThreadCountGuard guard;
  for (size_t threads : {1, 2, 3, 4, 8}) {
    attnlab::SetThreadCount(threads);
    CHECK(attnlab::ThreadCount() == (attnlab::ThreadsSupported() ? threads : 1));
    for (size_t n : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      attnlab::ParallelFor(n, [&](size_t i) { hits[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
    }
  }
}

TEST_CASE("ParallelFor uses more than one thread when it has them", "[parallel]") {
  if (!attnlab::ThreadsSupported()) return;
  ThreadCountGuard guard;
  attnlab::SetThreadCount(4);
  std::atomic<int> inside{0}, most{0};
  attnlab::ParallelFor(64, [&](size_t) {
    const int now = inside.fetch_add(1) + 1;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inside.fetch_sub(1);
  });
  CHECK(most.load() > 1);
}

TEST_CASE("ParallelFor rethrows an exception after every started index returned", "[parallel]") {
  ThreadCountGuard guard;
  for (size_t threads : {1, 4}) {
    attnlab::SetThreadCount(threads);
    std::atomic<int> running{0};
    CHECK_THROWS_AS(attnlab::ParallelFor(100,
                                         [&](size_t i) {
                                           running.fetch_add(1);
                                           if (i == 17) {
                                             running.fetch_sub(1);
                                             throw std::invalid_argument("index 17");
                                           }
                                           running.fetch_sub(1);
                                         }),
                    std::invalid_argument);
    CHECK(running.load() == 0);
    // The pool still works afterwards.
    std::atomic<int> count{0};
    attnlab::ParallelFor(10, [&](size_t) { count.fetch_add(1); });
    CHECK(count.load() == 10);
  }
}

TEST_CASE("nested and concurrent ParallelFor calls complete", "[parallel]") {
  ThreadCountGuard guard;
  attnlab::SetThreadCount(3);
  std::atomic<int> inner{0};
  attnlab::ParallelFor(4, [&](size_t) { attnlab::ParallelFor(5, [&](size_t) { inner.fetch_add(1); }); });
  CHECK(inner.load() == 20);
  if (!attnlab::ThreadsSupported()) return;  // (no std::thread to call from)
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) attnlab::ParallelFor(8, [&](size_t) { total.fetch_add(1); });
    });
  }
  for (std::thread& t : callers) t.join();
  CHECK(total.load() == 3 * 50 * 8);
}

TEST_CASE("SDPA and MHA results are bit-identical at 1, 2, 3, 4 and 8 threads", "[parallel]") {
  ThreadCountGuard guard;
  attnlab_test::Rng rng(11);
  // SDPA: 2 × 3 problems of 70 queries (two exact-path blocks and a remainder), 130 keys.
  const Shape qs{2, 3, 70, 8}, ks{2, 3, 130, 8}, vs{2, 3, 130, 6};
  const auto q = attnlab_test::RandomVector(rng, 2 * 3 * 70 * 8, -2, 2);
  const auto k = attnlab_test::RandomVector(rng, 2 * 3 * 130 * 8, -2, 2);
  const auto v = attnlab_test::RandomVector(rng, 2 * 3 * 130 * 6);
  const auto g = attnlab_test::RandomVector(rng, 2 * 3 * 70 * 6);
  // MHA: 2 items of 150 tokens (three projection row blocks), 4 heads, bias_k/v, per-head and averaged weights;
  // E = 64 makes every phase big enough to be split.
  attnlab::MhaConfig config;
  config.embed_dim = 64;
  config.num_heads = 4;
  config.add_bias_kv = true;
  config.batch_first = true;
  const Shape xs{2, 150, 64};
  const auto x = attnlab_test::RandomVector(rng, 2 * 150 * 64);
  const auto gx = attnlab_test::RandomVector(rng, 2 * 150 * 64);

  struct Run {
    std::vector<std::vector<float>> tensors;
  };
  auto run = [&] {
    Run r;
    attnlab::SdpaOptions sdpa;
    for (bool need_weights : {true, false}) {
      sdpa.need_weights = need_weights;
      const auto out = attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, sdpa);
      r.tensors.push_back(out.output.data);
      r.tensors.push_back(out.weights.data);
    }
    const auto grads = attnlab::ScaledDotProductAttentionBackward({q.data(), qs}, {k.data(), ks}, {v.data(), vs},
                                                                  {g.data(), {2, 3, 70, 6}});
    r.tensors.insert(r.tensors.end(), {grads.grad_query.data, grads.grad_key.data, grads.grad_value.data});
    attnlab::MultiHeadAttention mha(config, 5);
    for (bool average : {true, false}) {
      attnlab::MhaForwardOptions options;
      options.average_attn_weights = average;
      options.requires_grad = average;
      const auto out = mha.Forward({x.data(), xs}, {x.data(), xs}, {x.data(), xs}, options);
      r.tensors.push_back(out.output.data);
      r.tensors.push_back(out.weights.data);
    }
    const auto mg = mha.Backward({gx.data(), xs});
    r.tensors.insert(r.tensors.end(), {mg.grad_query.data, mg.grad_key.data, mg.grad_value.data});
    for (const auto& [name, t] : mg.grad_params) r.tensors.push_back(t.data);
    return r;
  };
  attnlab::SetThreadCount(1);
  const Run serial = run();
  for (size_t threads : {2, 3, 4, 8}) {
    attnlab::SetThreadCount(threads);
    const Run parallel = run();
    REQUIRE(parallel.tensors.size() == serial.tensors.size());
    for (size_t t = 0; t < serial.tensors.size(); ++t) {
      INFO("threads " << threads << ", tensor " << t);
      REQUIRE(parallel.tensors[t].size() == serial.tensors[t].size());
      // Bit for bit.
      if (serial.tensors[t].empty()) continue;  // (weights not requested; memcmp takes no null pointer)
      CHECK(std::memcmp(parallel.tensors[t].data(), serial.tensors[t].data(), 4 * serial.tensors[t].size()) == 0);
    }
  }
}
