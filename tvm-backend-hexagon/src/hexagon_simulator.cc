/*!
 * \file hexagon_simulator.cc
 * \brief Starting, driving and restarting the simulator process of a module.
 */
#include "hexagon_simulator.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/runtime/env_setting.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <list>
#include <sstream>

#include "hexagon_memory.h"

extern char** environ;

namespace tvm_backend_hexagon {
namespace {

constexpr uint32_t kMagicHello = 0x53485654u;   // "TVHS"
constexpr uint32_t kMagicLaunch = 0x4c485654u;  // "TVHL"
constexpr uint32_t kMagicReply = 0x52485654u;   // "TVHR"
constexpr uint32_t kProtocol = 3;               // 3: the launch header carries dynamic shared bytes
// Where the child finds the arena and its executable (dup2 clears close-on-exec there).
constexpr int kArenaFd = 3;
constexpr int kExecutableFd = 4;
constexpr int kStartTimeoutMs = 120 * 1000;
constexpr int kDefaultTimeoutSeconds = 600;
// A Hexagon v66 compute DSP has four hardware threads.
constexpr int kDefaultHardwareThreads = 4;
constexpr size_t kDefaultMaxSimulators = 8;

/*! \brief A regular file this process may run (access(X_OK) alone is true of a folder). */
bool IsExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

int LaunchTimeoutMs() {
  int64_t v = tvm::runtime::IntegerSetting("TVM_HEXAGON_TIMEOUT", kDefaultTimeoutSeconds, 0, 86400,
                                           "whole seconds (0: no limit)");
  return v == 0 ? -1 : static_cast<int>(v * 1000);
}

/*! \brief TVM_HEXAGON_PROCESS_PER_LAUNCH=1: a new simulator process for every launch (slow; the
 *  benchmark's baseline, and a way to isolate launches from each other). */
bool OneProcessPerLaunch() {
  return tvm::runtime::BooleanSetting("TVM_HEXAGON_PROCESS_PER_LAUNCH", false);
}

/*! \brief A close-on-exec memfd holding `bytes` (the child gets it as kExecutableFd). */
int ExecutableFd(const std::string& bytes) {
  int fd = static_cast<int>(memfd_create("tvm-hexagon-module", MFD_CLOEXEC));
  size_t off = 0;
  while (fd >= 0 && off < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n <= 0) {
      close(fd);
      fd = -1;
    } else {
      off += static_cast<size_t>(n);
    }
  }
  if (fd < 0) {
    TVM_FFI_THROW(RuntimeError) << "hexagon: cannot store the module's executable in memory: "
                                << std::strerror(errno);
  }
  return fd;
}

std::string DescribeExit(int status) {
  std::ostringstream os;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    os << "was killed by signal " << sig << " (" << strsignal(sig) << ")";
  } else if (WIFEXITED(status)) {
    os << "exited with status " << WEXITSTATUS(status);
  } else {
    os << "ended (wait status " << status << ")";
  }
  return os.str();
}

}  // namespace

size_t MaxSimulators() {
  return static_cast<size_t>(tvm::runtime::IntegerSetting(
      "TVM_HEXAGON_MAX_SIMULATORS", kDefaultMaxSimulators, 1, 1024, "a number of processes"));
}

/*!
 * \brief The simulators whose process runs, most recently used first. A process lives as long as
 *  its module, and modules live as long as the Python process (tvm.compile keeps what it loaded),
 *  so without a bound every kernel ever compiled (a tuning run compiles one per configuration)
 *  would keep a qemu process; the least recently used idle one is stopped instead, and its next
 *  launch starts it again.
 */
class RunningSimulators {
 public:
  static RunningSimulators& Get() {
    static auto* running = new RunningSimulators();  // simulators may outlive static destructors
    return *running;
  }

  /*! \brief `sim` was just used (started or launched). */
  void Touch(Simulator* sim) {
    std::lock_guard<std::mutex> lock(mu_);
    list_.remove(sim);
    list_.push_front(sim);
  }

  /*! \brief `sim` has no process any more. */
  void Forget(Simulator* sim) {
    std::lock_guard<std::mutex> lock(mu_);
    list_.remove(sim);
  }

  /*! \brief Stops least recently used idle simulators (never `user`, whose lock the caller
   *  holds) until at most `limit` run: MaxSimulators() - 1 before `user` starts, MaxSimulators()
   *  after its launch (which also trims what starts racing each other left). */
  void Trim(Simulator* user, size_t limit) {
    while (Simulator* idle = TakeIdle(user, limit)) {
      idle->Stop(true);
      idle->mu_.unlock();
    }
  }

 private:
  /*! \brief With more than `limit` running: the least recently used one not running a kernel,
   *  taken off the list with its lock held; else null. */
  Simulator* TakeIdle(Simulator* user, size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    if (list_.size() <= limit) return nullptr;
    for (auto it = list_.rbegin(); it != list_.rend(); ++it) {
      Simulator* sim = *it;
      if (sim != user && sim->mu_.try_lock()) {  // try: never wait for a running kernel
        list_.erase(std::next(it).base());
        return sim;
      }
    }
    return nullptr;
  }

  std::mutex mu_;
  std::list<Simulator*> list_;
};

int HardwareThreads() {
  return static_cast<int>(tvm::runtime::IntegerSetting(
      "TVM_HEXAGON_THREADS", kDefaultHardwareThreads, 1, 16, "a number of hardware threads"));
}

std::string FindSimulator(std::string* why) {
  if (const char* env = std::getenv("TVM_HEXAGON_QEMU")) {
    if (IsExecutable(env)) return env;
    *why = std::string("TVM_HEXAGON_QEMU='") + env + "' is not an executable file";
    return "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (const char* name : {"qemu-hexagon", "qemu-hexagon-static"}) {
    std::istringstream split(dirs);
    for (std::string dir; std::getline(split, dir, ':');) {
      std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
      if (IsExecutable(candidate)) return candidate;
    }
  }
  *why =
      "the Hexagon simulator qemu-hexagon is not installed (looked for qemu-hexagon and "
      "qemu-hexagon-static on PATH)";
  return "";
}

Simulator::Simulator(std::string executable, std::string qemu, uint32_t num_kernels)
    : executable_(std::move(executable)), qemu_(std::move(qemu)), num_kernels_(num_kernels) {}

Simulator::~Simulator() {
  std::lock_guard<std::mutex> lock(mu_);
  Stop(true);
}

bool Simulator::Send(const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t put = send(sock_, p, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

bool Simulator::Receive(void* buf, size_t n, int timeout_ms, bool* timed_out) {
  char* p = static_cast<char*>(buf);
  *timed_out = false;
  // one deadline for the whole reply: signals that interrupt poll (SIGCHLD, a timer) must not
  // restart the time limit
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (n > 0) {
    pollfd pfd{sock_, POLLIN, 0};
    int left = timeout_ms;
    if (timeout_ms >= 0) {
      auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      left = static_cast<int>(std::max<int64_t>(rest.count(), 0));
    }
    int ready = poll(&pfd, 1, left);
    if (ready < 0 && errno == EINTR) {
      if (TVMFFIEnvCheckSignals() == 0) continue;
      interrupted_ = true;  // Ctrl-C: Python's KeyboardInterrupt is set; the launch gives up
      return false;
    }
    if (ready == 0) *timed_out = true;
    if (ready <= 0) return false;
    ssize_t got = recv(sock_, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

void Simulator::Start() {
  Arena& arena = Arena::Get();
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    TVM_FFI_THROW(RuntimeError) << "hexagon: socketpair failed: " << std::strerror(errno);
  }
  int exe = ExecutableFd(executable_);
  std::string exe_path = "/proc/self/fd/" + std::to_string(kExecutableFd);
  std::string arena_fd = std::to_string(kArenaFd), arena_size = std::to_string(arena.size());
  std::string threads = std::to_string(HardwareThreads());
  char* argv[] = {qemu_.data(),      exe_path.data(), arena_fd.data(),
                  arena_size.data(), threads.data(),  nullptr};
  // Sources are moved out of the way first: dup2 onto a source numbered 3 or 4 would clobber it.
  int moved[3] = {fcntl(pair[1], F_DUPFD_CLOEXEC, 10), fcntl(arena.fd(), F_DUPFD_CLOEXEC, 10),
                  fcntl(exe, F_DUPFD_CLOEXEC, 10)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, moved[0], 0);
  posix_spawn_file_actions_adddup2(&actions, moved[0], 1);
  posix_spawn_file_actions_adddup2(&actions, moved[1], kArenaFd);
  posix_spawn_file_actions_adddup2(&actions, moved[2], kExecutableFd);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, qemu_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  for (int fd : {pair[1], exe, moved[0], moved[1], moved[2]}) close(fd);
  if (rc != 0) {
    close(pair[0]);
    TVM_FFI_THROW(RuntimeError) << "hexagon: cannot start the simulator " << qemu_ << ": "
                                << std::strerror(rc);
  }
  pid_ = pid;
  sock_ = pair[0];
  uint32_t hello[4];
  bool timed_out = false;
  if (!Receive(hello, sizeof(hello), kStartTimeoutMs, &timed_out)) {
    std::string how = timed_out ? "did not answer within 120 s" : Stop(false);
    if (timed_out) Stop(true);
    TVM_FFI_THROW(RuntimeError) << "hexagon: the simulator process (" << qemu_ << ") " << how
                                << " while starting the module's executable; its output is above";
  }
  if (hello[0] != kMagicHello || hello[1] != kProtocol || hello[3] != num_kernels_) {
    Stop(true);
    TVM_FFI_THROW(RuntimeError) << "hexagon: the module's executable is not a kernel server of "
                                << "protocol " << kProtocol << " with " << num_kernels_
                                << " kernels (got magic " << hello[0] << ", version " << hello[1]
                                << ", " << hello[3] << " kernels): rebuild the module";
  }
  guest_base_ = hello[2];
  RunningSimulators::Get().Touch(this);
}

std::string Simulator::Stop(bool kill_it) {
  RunningSimulators::Get().Forget(this);
  if (sock_ >= 0) close(sock_);
  sock_ = -1;
  if (pid_ < 0) return "was not running";
  // a running process was started after the arena was made: in a forked child it is the parent's
  if (Arena::Get().Forked()) {
    pid_ = -1;
    return "belongs to the parent process";
  }
  if (kill_it) kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return DescribeExit(status);
}

void Simulator::Launch(LaunchHeader header, std::vector<uint64_t> slots,
                       const std::vector<int64_t>& host_offsets, const std::string& name) {
  int timeout_ms = LaunchTimeoutMs();
  size_t max_simulators = MaxSimulators();
  std::lock_guard<std::mutex> lock(mu_);
  int idle_status = 0;
  if (pid_ >= 0 && !Arena::Get().Forked() && waitpid(pid_, &idle_status, WNOHANG) == pid_) {
    pid_ = -1;  // it ended while idle (killed from outside): reaped here, started anew below
    Stop(false);
  }
  if (pid_ < 0) {
    RunningSimulators::Get().Trim(this, max_simulators - 1);
    Start();
  } else {
    RunningSimulators::Get().Touch(this);
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    if (host_offsets[i] >= 0) slots[i] = guest_base_ + static_cast<uint64_t>(host_offsets[i]);
  }
  header.magic = kMagicLaunch;
  header.nargs = static_cast<uint32_t>(slots.size());
  uint32_t reply[4] = {0, 0, 0, 0};
  bool timed_out = false;
  interrupted_ = false;
  bool ok = Send(&header, sizeof(header)) && Send(slots.data(), slots.size() * sizeof(uint64_t)) &&
            Receive(reply, sizeof(reply), timeout_ms, &timed_out) && reply[0] == kMagicReply;
  std::string message(ok ? reply[2] : 0, '\0');
  ok = ok && (message.empty() || Receive(message.data(), message.size(), timeout_ms, &timed_out));
  if (!ok && interrupted_) {
    Stop(true);  // the kernel may still be running: the next launch starts a new simulator
    throw tvm::ffi::EnvErrorAlreadySet();
  }
  if (!ok) {
    pid_t pid = pid_;
    std::string how = Stop(timed_out);
    std::ostringstream os;
    os << "hexagon kernel " << name << ": the simulator process (" << qemu_ << ", pid " << pid
       << ") ";
    if (timed_out) {
      os << "did not finish it within " << timeout_ms / 1000
         << " s (TVM_HEXAGON_TIMEOUT) and was stopped";
    } else {
      os << how << " while running it (an access outside the kernel's buffers, or local arrays "
         << "larger than a thread's stack, end it with SIGSEGV; the simulator's own message is "
         << "above)";
    }
    os << ". Device memory is kept; the next launch starts a new simulator process.";
    TVM_FFI_THROW(RuntimeError) << os.str();
  }
  if (OneProcessPerLaunch()) Stop(false);  // the server sees the socket close and exits
  RunningSimulators::Get().Trim(this, max_simulators);
  if (reply[1] != 0) {
    TVM_FFI_THROW(RuntimeError) << "hexagon kernel " << name
                                << " failed in the simulator: " << message;
  }
}

}  // namespace tvm_backend_hexagon
