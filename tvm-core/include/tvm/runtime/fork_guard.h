/*!
 * \file tvm/runtime/fork_guard.h
 * \brief Device state and fork(): a child made by fork() (multiprocessing's default start method
 *        on Linux) inherits its parent's driver objects but not the driver's threads, so using
 *        them there hangs (PoCL, lavapipe) or shares memory with the parent (a MAP_SHARED arena).
 *        State made before a fork is stale in the child: using it raises ForkedChildMessage, and
 *        freeing what the parent allocated is skipped (it is the parent's).
 *
 * \code
 * ForkGuard guard;                 // in state made on first use
 * if (guard.Stale()) TVM_FFI_THROW(RuntimeError) << ForkedChildMessage("OpenCL");
 * \endcode
 */
#ifndef TVM_RUNTIME_FORK_GUARD_H_
#define TVM_RUNTIME_FORK_GUARD_H_

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace tvm {
namespace runtime {

/*! \brief The forks this library has seen, counted in each child (the count is per library: it
 *  compares only with itself). The first call registers the counter. */
inline unsigned ForkCount() {
  static std::atomic<unsigned> forks{0};
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(nullptr, nullptr, [] { forks.fetch_add(1, std::memory_order_relaxed); });
  });
  return forks.load(std::memory_order_relaxed);
}

/*!
 * \brief Makes fork() take `mu` (a mutex of static storage) before it forks and release it after,
 *  in the parent and in the child: a child never inherits it locked by a thread that did not come
 *  along (it would wait for it forever). Mutexes are taken in the order they were registered;
 *  hold none of them while taking another.
 */
inline void HoldAcrossFork(std::mutex* mu) {
  static std::mutex registering;
  static auto* held = new std::vector<std::mutex*>();  // used until the process ends
  static std::once_flag once;
  std::lock_guard<std::mutex> lock(registering);
  held->push_back(mu);
  std::call_once(once, [] {
    auto release = [] {
      for (auto it = held->rbegin(); it != held->rend(); ++it) (*it)->unlock();
      registering.unlock();
    };
    pthread_atfork(
        [] {
          registering.lock();
          for (std::mutex* m : *held) m->lock();
        },
        release, release);
  });
}

/*! \brief Remembers the process it was made in: Stale() in a child forked after that. */
class ForkGuard {
 public:
  ForkGuard() : forks_(ForkCount()) {}
  /*! \brief Whether this process is a fork() child of the one that made the guard. */
  bool Stale() const { return ForkCount() != forks_; }

 private:
  unsigned forks_;
};

/*! \brief What every ForkedChildMessage says. */
constexpr const char* kForkedChild = "set up by the parent of this process before it called fork()";

/*! \brief Why `api`'s devices cannot be used in a child forked after they were set up, and how
 *  to start child processes that can use them. */
inline std::string ForkedChildMessage(const std::string& api) {
  return api + " devices were " + kForkedChild + ", and a forked child cannot use them (the " +
         "driver's threads did not come along); start child processes with " +
         "multiprocessing.get_context('spawn') (or 'forkserver'), or fork them before the parent " +
         "first uses the device";
}

/*! \brief `why` a device is unusable with `fix` (what to install) appended, unless `why` is a
 *  ForkedChildMessage: installing nothing helps there. */
inline std::string ReasonWithFix(const std::string& why, const std::string& fix) {
  return why.find(kForkedChild) != std::string::npos ? why : why + "; " + fix;
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_FORK_GUARD_H_
