/*!
 * \file hexagon_simulator.h
 * \brief One long-lived simulator process (qemu-hexagon running a module's executable: the
 *        server in tvm_backend_hexagon/server.c linked with the kernels), driven over a socket.
 *
 * Protocol (little-endian; the server's comment says the same):
 *   hello  <- {'TVHS', version, guest address of the arena, number of kernels}
 *   launch -> LaunchHeader then nargs 8-byte argument slots (buffers: guest addresses)
 *   reply  <- {'TVHR', status, message bytes, 0} then the message (status 0: done)
 */
#ifndef TVM_BACKEND_HEXAGON_SIMULATOR_H_
#define TVM_BACKEND_HEXAGON_SIMULATOR_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tvm_backend_hexagon {

/*! \brief The command that starts one launch. */
struct LaunchHeader {
  uint32_t magic;
  uint32_t kernel;
  int64_t grid[3];
  int64_t block[3];
  uint32_t nargs;
  uint32_t dyn_shmem;  // bytes of dynamic shared memory
};

/*! \brief The simulator command found at backend init (TVM_HEXAGON_QEMU, else qemu-hexagon or
 *  qemu-hexagon-static on PATH); "" with `why` set when there is none. */
std::string FindSimulator(std::string* why);

/*! \brief How many hardware threads share the blocks of a kernel without barriers or shared
 *  memory (TVM_HEXAGON_THREADS, 1 to 16; default 4, a v66 compute DSP's). */
int HardwareThreads();

/*! \brief How many simulator processes may run at once (TVM_HEXAGON_MAX_SIMULATORS, 1 to 1024;
 *  default 8). */
size_t MaxSimulators();

class RunningSimulators;

/*!
 * \brief A module's simulator process: started on its first launch, and stopped when the module
 *  goes, or earlier, while idle, when TVM_HEXAGON_MAX_SIMULATORS (default 8) others were used
 *  more recently (its next launch starts it again; device memory is never in the process). More
 *  run only while more kernels than that run at once.
 */
class Simulator {
 public:
  /*! \param executable The module's static Hexagon executable. \param qemu The simulator. */
  Simulator(std::string executable, std::string qemu, uint32_t num_kernels);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /*!
   * \brief Runs kernel `header.kernel` (named `name` in errors) and waits until it finishes.
   *  `host_offsets[i]` >= 0 marks slot i as a buffer at that arena offset, replaced by its guest
   *  address. Starts the process on first use and again after it died; throws RuntimeError
   *  when the kernel fails, the process dies or the launch exceeds TVM_HEXAGON_TIMEOUT seconds.
   *  (A forked child never gets here: its module refuses the launch, Arena::CheckThisProcess.)
   */
  void Launch(LaunchHeader header, std::vector<uint64_t> slots,
              const std::vector<int64_t>& host_offsets, const std::string& name);

 private:
  friend class RunningSimulators;  // stops the least recently used idle process (Trim)
  void Start();
  /*! \brief Ends the process (killed when `kill`), reaps it and says how it ended. */
  std::string Stop(bool kill);
  /*! \brief Reads exactly `n` bytes within `timeout_ms` (-1: none); false on EOF, timeout or a
   *  signal Python turns into an exception (then `interrupted_`). */
  bool Receive(void* buf, size_t n, int timeout_ms, bool* timed_out);
  bool Send(const void* buf, size_t n);

  std::string executable_;
  std::string qemu_;
  uint32_t num_kernels_;
  std::mutex mu_;
  pid_t pid_ = -1;
  bool interrupted_ = false;  // the last Receive was ended by a signal Python raises (Ctrl-C)
  int sock_ = -1;
  uint32_t guest_base_ = 0;
};

}  // namespace tvm_backend_hexagon

#endif  // TVM_BACKEND_HEXAGON_SIMULATOR_H_
