// A small portable parallel-for for the ops' CPU kernels (framework-free, std::thread only).
//
//   int n = opcore::cpu_threads();   // OPBENCH_CPU_THREADS, else the framework's pool, OMP_NUM_THREADS, the cores
//   opcore::parallel_for(items, work_per_item, [&](int64_t begin, int64_t end) { ... });
//
// Items are split into contiguous blocks that the threads take in turn; a kernel whose items write
// disjoint results (or fixed-size partial sums combined afterwards in item order) therefore gives the
// same bits for any thread count and any schedule. Work below kMinWorkPerThread elements a thread runs on
// the caller alone.
//
// The threads: worker threads of our own, started once, which poll for a short while before they sleep
// (so back-to-back calls cost neither a thread start nor a wake-up); a forked child starts its own.
// The environment is read on every call, so a test can change the count.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace opcore {

constexpr int64_t kMinWorkPerThread = 32768;  // elements; below this a thread costs more than it saves
constexpr int64_t kBlocksPerThread = 4;       // blocks a call's items are cut into, per thread

// A framework's own thread pool, which a binding may install with set_framework_pool(): the kernels'
// threads then run on it rather than beside it (a framework's OpenMP workers spin for a while after each
// of its ops, and would take the cores from ours). The work is still split by parallel_for below.
struct FrameworkPool {
  void (*run)(int n, const std::function<void(int)>& fn) = nullptr;  // calls fn(0) .. fn(n-1), returns after
  int (*threads)() = nullptr;                                         // how many threads it has
};

inline FrameworkPool& framework_pool() {
  static FrameworkPool pool;  // one per extension library
  return pool;
}

inline void set_framework_pool(FrameworkPool pool) { framework_pool() = pool; }

#ifdef _OPENMP
// A FrameworkPool::run on the OpenMP runtime this library is linked to. A binding built with -fopenmp and
// linked to its framework's runtime installs it: the kernels then run on the framework's own team, whose
// workers are still spinning from the framework's last op, instead of beside them on the same cores.
inline void openmp_run(int n, const std::function<void(int)>& fn) {
#pragma omp parallel num_threads(n)
  fn(omp_get_thread_num());
}

// The runtime's thread count for the calling thread (OMP_NUM_THREADS, or what the framework last set).
inline int openmp_threads() { return omp_get_max_threads(); }
#endif

// Threads a CPU kernel may use: OPBENCH_CPU_THREADS, else the framework pool's count, else
// OMP_NUM_THREADS, else the hardware's count.
inline int cpu_threads() {
  const char* v = std::getenv("OPBENCH_CPU_THREADS");
  if (v != nullptr && std::atoi(v) > 0) return std::atoi(v);
  if (framework_pool().threads != nullptr) return std::max(1, framework_pool().threads());
  v = std::getenv("OMP_NUM_THREADS");
  if (v != nullptr && std::atoi(v) > 0) return std::atoi(v);
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

// Worker threads that persist between calls. run(n, fn) calls fn(n-1) on the caller and fn(0) .. fn(n-2)
// on the workers that take their part before the caller has finished its own: fn must take its work
// from a shared counter (parallel_for's blocks), so that the caller does what a worker that the system
// has not scheduled yet would have done, and the call never waits for a thread that has not started.
// It returns when every part that was taken is done; calls from several threads take turns. A worker
// that has finished a job polls for the next one for kSpin before sleeping on a condition variable, and
// the caller polls for the workers' end likewise: waking a sleeping thread costs tens of microseconds,
// as much as the work of a mid-size call.
class Pool {
 public:
  static constexpr std::chrono::microseconds kSpin{200};

  static Pool& get() {
    static Pool* pool = new Pool();  // never destroyed: its threads wait for work until the process ends
    if (pool->pid_ != getpid()) pool = new Pool();  // after fork() the parent's workers do not exist here
    return *pool;
  }

  void run(int n, const std::function<void(int)>& fn) {
    std::lock_guard<std::mutex> call(call_mu_);
    {
      std::lock_guard<std::mutex> g(mu_);
      while (static_cast<int>(workers_.size()) < n - 1) {
        const int id = static_cast<int>(workers_.size());
        workers_.emplace_back([this, id] { work(id); });
        workers_.back().detach();
      }
      job_.store(&fn);
      finished_.store(0);
      slots_.store(n - 1);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    fn(n - 1);
    const int taken = (n - 1) - slots_.exchange(0);  // the parts no worker has taken are closed
    const auto done = [this, taken] { return finished_.load() == taken; };
    if (poll(done)) return;
    std::unique_lock<std::mutex> g(mu_);
    done_.wait(g, done);
  }

 private:
  Pool() : pid_(getpid()) {}

  // Polls ready() for up to kSpin, yielding the core between polls; true once it holds.
  template <typename Ready>
  static bool poll(Ready&& ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    do {
      if (ready()) return true;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < until);
    return ready();
  }

  void work(int id) {
    uint64_t seen = 0;
    for (;;) {
      const auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!poll(fresh)) {
        std::unique_lock<std::mutex> g(mu_);
        wake_.wait(g, fresh);
      }
      seen = generation_.load();
      int free = slots_.load();
      while (free > 0 && !slots_.compare_exchange_weak(free, free - 1)) {
      }
      if (free <= 0) continue;  // the caller has finished without this worker
      (*job_.load())(id);
      finished_.fetch_add(1);
      std::lock_guard<std::mutex> g(mu_);  // the caller checks finished_ under mu_ before it sleeps
      done_.notify_one();
    }
  }

  pid_t pid_;
  std::mutex call_mu_, mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<const std::function<void(int)>*> job_{nullptr};
  std::atomic<int> slots_{0}, finished_{0};
  std::atomic<uint64_t> generation_{0};
};

// Runs the job fn on n threads (see Pool::run): the framework pool when a binding installed one, else ours.
inline void run_team(int n, const std::function<void(int)>& fn) {
  if (framework_pool().run != nullptr) {
    framework_pool().run(n, fn);
  } else {
    Pool::get().run(n, fn);
  }
}

// Calls fn(begin, end) on disjoint ranges covering [0, items), in parallel when the total work
// (items * work_per_item elements) gives each thread at least kMinWorkPerThread elements.
// The items are cut into up to kBlocksPerThread blocks per thread (none under kMinWorkPerThread / 2
// elements), which the threads take in turn from a shared counter: a thread that the system schedules
// late (another process, or a framework's spinning workers, on its core) takes fewer blocks and the
// others do the rest, instead of the call waiting for it. Which thread runs a block varies; a block's
// results must not (every kernel here computes each item from its own inputs alone).
template <typename F>
void parallel_for(int64_t items, int64_t work_per_item, F&& fn) {
  if (items <= 0) return;
  const int64_t work = items * std::max<int64_t>(work_per_item, 1);
  const int64_t by_work = std::max<int64_t>(1, work / kMinWorkPerThread);
  const int64_t n = std::min<int64_t>({static_cast<int64_t>(cpu_threads()), by_work, items});
  if (n <= 1) {
    fn(int64_t(0), items);
    return;
  }
  const int64_t blocks =
      std::min<int64_t>({n * kBlocksPerThread, std::max<int64_t>(n, 2 * work / kMinWorkPerThread), items});
  const int64_t per = items / blocks, extra = items % blocks;
  std::atomic<int64_t> next{0};
  const std::function<void(int)> task = [&](int) {
    for (int64_t b = next.fetch_add(1, std::memory_order_relaxed); b < blocks;
         b = next.fetch_add(1, std::memory_order_relaxed)) {
      const int64_t begin = b * per + std::min<int64_t>(b, extra);
      fn(begin, begin + per + (b < extra ? 1 : 0));
    }
  };
  run_team(static_cast<int>(n), task);
}

}  // namespace opcore
