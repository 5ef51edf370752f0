/*!
 * \file tvm/runtime/lazy_discovery.h
 * \brief A backend's process-wide device state, discovered once, on first use, thread-safely.
 *
 * Activation runs at every `import tvm`, so a backend only loads its driver there; enumerating
 * platforms and devices waits for the first use of a device or a kernel. Concurrent first users
 * wait for one discovery; later calls cost one atomic load. The state is never destroyed: driver
 * objects must not be released from static destructors, after the driver may have been torn down.
 *
 * \code
 * class Workspace {
 *   friend class tvm::runtime::LazyDiscovery<Workspace>;
 *   Workspace() = default;
 *   std::string Discover();  // "" on success, else why no device is usable
 * };
 * static tvm::runtime::LazyDiscovery<Workspace> discovery("OpenCL", "apt-get install ...");
 * Workspace* ws = discovery.TryGet(&why);       // null (and why) when discovery failed
 * Workspace* ws = discovery.Get("cannot launch"); // or RuntimeError "<what>: <why>; <fix>"
 * \endcode
 */
#ifndef TVM_RUNTIME_LAZY_DISCOVERY_H_
#define TVM_RUNTIME_LAZY_DISCOVERY_H_

#include <tvm/ffi/error.h>
#include <tvm/runtime/fork_guard.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

namespace tvm {
namespace runtime {

/*!
 * \brief Owns the one discovery of `State` (default-constructible by this class, with
 *        `std::string Discover()` returning "" on success or the reason no device is usable).
 */
template <typename State>
class LazyDiscovery {
 public:
  /*!
   * \param api The API's name in messages ("OpenCL").
   * \param fix What to install when no device is found (appended to every error).
   */
  LazyDiscovery(std::string api, std::string fix) : api_(std::move(api)), fix_(std::move(fix)) {}

  /*! \brief The state, discovering on the first call; null (and `*why` set) when none is usable. */
  State* TryGet(std::string* why = nullptr) {
    if (!discovered_.load(std::memory_order_acquire)) {
      // A discovery the parent of this forked child had under way never finishes here, and its
      // lock stays taken (std::call_once waited forever): a child refuses such state, as it
      // refuses what the parent found. Each discoverer says which process it runs in first.
      unsigned here = ForkCount();
      unsigned expected = kNobody;
      if (!started_in_.compare_exchange_strong(expected, here) && expected != here) {
        if (why != nullptr) *why = ForkedChildMessage(api_);
        return nullptr;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!discovered_.load(std::memory_order_relaxed)) Discover();
    }
    if (state_ != nullptr && guard_.Stale()) {
      if (why != nullptr) *why = ForkedChildMessage(api_);
      return nullptr;
    }
    if (state_ == nullptr && why != nullptr) *why = error_;
    return state_;
  }

  /*! \brief The state; throws RuntimeError "<what>: <reason>; <fix>" when none is usable. */
  State* Get(const std::string& what) {
    State* state = TryGet();
    if (state == nullptr) ThrowUnavailable(what);
    return state;
  }

  /*! \brief Throws the RuntimeError of Get for `what` (discovery must have failed). */
  [[noreturn]] void ThrowUnavailable(const std::string& what) {
    std::string why;
    TryGet(&why);
    TVM_FFI_THROW(RuntimeError) << what << ": " << ReasonWithFix(why, fix_);
    throw;  // unreachable: TVM_FFI_THROW throws
  }

  /*! \brief Whether discovery has run in this process (for tests of lazy activation). */
  bool discovered() const { return discovered_.load(std::memory_order_acquire); }

  /*! \brief Whether the devices were found by the parent of this forked child (what they
   *  allocated there is the parent's: a free of it is skipped, silently). */
  bool forked() const { return discovered() && state_ != nullptr && guard_.Stale(); }

  /*! \brief What to install when no device is found. */
  const std::string& fix() const { return fix_; }

 private:
  void Discover() {
    guard_ = ForkGuard();       // the state belongs to this process
    auto* state = new State();  // never destroyed (see the file comment)
    std::string err;
    try {
      err = state->Discover();
    } catch (const std::exception& e) {
      err = api_ + " device discovery failed: " + e.what();
    }
    if (err.empty()) {
      state_ = state;
    } else {
      error_ = std::move(err);
    }
    discovered_.store(true, std::memory_order_release);
  }

  std::string api_;
  std::string fix_;
  static constexpr unsigned kNobody = ~0u;
  std::atomic<unsigned> started_in_{kNobody};  // the ForkCount() of the first discoverer
  std::mutex mu_;                              // held by the discovery
  ForkGuard guard_;  // remade by the discovery: the process the state belongs to
  State* state_ = nullptr;
  std::string error_;
  std::atomic<bool> discovered_{false};
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_LAZY_DISCOVERY_H_
