// Runs generated CUDA-dialect kernels (CUDA C, and HIP through a backend's small shim) on the CPU,
// for the tests of a machine without a GPU. Part of the backend kit's test tools: found next to
// tvm/testing/__init__.py (tvm.testing.GPU_ON_CPU_HEADER).
//
// A backend's test harness (tvm-backend-cuda/tests/cuda_on_cpu.py, tvm-backend-rocm/tests/
// hip_on_cpu.py) compiles the source its code generator produced, wrapped in namespace
// tvm_emu_kernels, as host C++ after this header; the backend's mock driver library calls the
// resulting tvm_emu_launch_<kernel> entries from its launch call. Together with the real runtime
// library in between, this executes the whole path (codegen, argument packing, launch extents,
// kernel semantics) and lets the tests compare results with NumPy.
//
// Model: the blocks of a grid run one after another; the threads of a block are fibers
// (ucontext) on one OS thread, switched only at __syncthreads and at warp collectives, so a run is
// deterministic. __shared__ variables become function statics (one block is live at a time).
// __syncthreads releases when every live thread of the block waits at it; a warp collective
// (__shfl_*_sync, __ballot_sync, __syncwarp, __activemask) when every lane named by its mask
// waits at one. A state where nothing can proceed (a divergent barrier) fails the launch with a
// message instead of hanging. The tensor-core instructions (ldmatrix, mma.sync, cp.async
// groups, wmma fragments) are modelled from the PTX ISA below. Not emulated: atomics, races between
// threads (cuda_tc_emulator.py checks the tensor-core kernels for those), anything about timing.
#pragma once

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tvm_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

enum class State { kRunnable, kAtBarrier, kAtWarpOp, kDone };
enum class WarpOp { kSync, kBallot, kShflIdx, kShflUp, kShflDown, kShflXor, kActiveMask, kCustom };

// A warp-wide instruction (ldmatrix, mma) computed for all lanes at once from what each posted.
using Collective = void (*)(void* const payloads[32], uint32_t members);

struct AsyncCopy {
  void* dst;
  const void* src;
  unsigned bytes;
  unsigned group;
};

struct Fiber {
  ucontext_t ctx;
  Dim3 tid;
  unsigned linear = 0;
  State state = State::kRunnable;
  // the warp collective this lane waits at, its operands, and its result once released
  WarpOp op = WarpOp::kSync;
  uint32_t mask = 0;
  uint64_t value = 0;
  int lane_arg = 0, width = 32;
  uint64_t result = 0;
  Collective collective = nullptr;
  void* payload = nullptr;
  // cp.async copies not yet landed, and how many commit groups this thread has closed
  std::vector<AsyncCopy> copies;
  unsigned committed = 0;
};

constexpr size_t kStackBytes = 128 * 1024;
constexpr unsigned kMaxThreads = 1024;
constexpr size_t kDynShmemBytes = 232448;

struct Block {
  std::vector<Fiber> fibers;
  std::vector<std::vector<char>> stacks;
  unsigned count = 0;
  Fiber* current = nullptr;
  ucontext_t scheduler;
  std::function<void()> body;
  Dim3 idx, dim, grid;  // blockIdx, blockDim, gridDim of the block being run
  std::string fault;    // what a thread did that the hardware would fault on (ends the launch)
};

inline Block& block() {
  static Block b;
  return b;
}
inline Fiber& self() { return *block().current; }

inline void yield_to_scheduler() { swapcontext(&self().ctx, &block().scheduler); }

inline unsigned lane_id() { return self().linear % 32; }

inline uint32_t lanes_of_warp(unsigned warp) {
  unsigned first = warp * 32, n = block().count - first < 32 ? block().count - first : 32;
  return n == 32 ? 0xffffffffu : ((1u << n) - 1u);
}

inline void syncthreads() {
  self().state = State::kAtBarrier;
  yield_to_scheduler();
}

template <typename T>
uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8, "warp collectives move at most 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <typename T>
T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

inline uint64_t warp_op(WarpOp op, uint32_t mask, uint64_t value, int lane_arg, int width) {
  Fiber& f = self();
  f.op = op;
  f.mask = mask;
  f.value = value;
  f.lane_arg = lane_arg;
  f.width = width;
  f.state = State::kAtWarpOp;
  yield_to_scheduler();
  return f.result;
}

// The waiting lanes at the same __activemask() call as lane `l` (its site is its lane_arg): lanes
// of the two arms of a branch are told apart, as a GPU runs the arms one after the other.
inline uint32_t at_same_site(Fiber* const lanes[32], uint32_t waiting, int l) {
  uint32_t same = 0;
  for (int k = 0; k < 32; ++k) {
    if ((waiting >> k & 1u) && lanes[k]->op == WarpOp::kActiveMask &&
        lanes[k]->lane_arg == lanes[l]->lane_arg)
      same |= 1u << k;
  }
  return same;
}

// What every lane of a released warp collective gets. Offsets and lane masks are taken modulo
// 32 (PTX reads their low five bits).
inline void resolve_warp(Fiber* lanes[32], uint32_t members) {
  int first = __builtin_ctz(members);
  if (lanes[first]->op == WarpOp::kCustom) {
    void* payloads[32] = {};
    for (int l = 0; l < 32; ++l) {
      if (members >> l & 1u) payloads[l] = lanes[l]->payload;
    }
    lanes[first]->collective(payloads, members);
    for (int l = 0; l < 32; ++l) {
      if (members >> l & 1u) lanes[l]->state = State::kRunnable;
    }
    return;
  }
  uint32_t ballot = 0;
  for (int l = 0; l < 32; ++l) {
    if ((members >> l & 1u) && lanes[l]->op == WarpOp::kBallot && lanes[l]->value)
      ballot |= 1u << l;
  }
  for (int l = 0; l < 32; ++l) {
    if (!(members >> l & 1u)) continue;
    Fiber* f = lanes[l];
    int w = f->width, base = l / w * w, src = l, arg = f->lane_arg & 31;
    switch (f->op) {
      case WarpOp::kShflIdx:
        src = base + ((f->lane_arg % w) + w) % w;
        break;
      case WarpOp::kShflUp:
        src = (l - base) >= arg ? l - arg : l;
        break;
      case WarpOp::kShflDown:
        src = (l - base) + arg < w ? l + arg : l;
        break;
      case WarpOp::kShflXor:
        src = ((l ^ arg) < base + w) ? (l ^ arg) : l;
        break;
      default:
        break;
    }
    if (f->op == WarpOp::kBallot) {
      f->result = ballot;
    } else if (f->op == WarpOp::kActiveMask) {
      f->result = at_same_site(lanes, members, l);
    } else if (src >= 0 && src < 32 && (members >> src & 1u)) {
      f->result = lanes[src]->value;
    } else {
      f->result = f->value;  // reading a lane outside the mask: CUDA leaves it undefined
    }
    f->state = State::kRunnable;
  }
}

inline std::string describe(const Fiber& f) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "thread (%u,%u,%u) of block (%u,%u,%u)", f.tid.x, f.tid.y,
                f.tid.z, block().idx.x, block().idx.y, block().idx.z);
  return buf;
}

// Releases what can be released once no fiber is runnable; an error message when nothing can.
inline std::string release_waiters() {
  Block& b = block();
  bool released = false;
  for (unsigned warp = 0; warp * 32 < b.count; ++warp) {
    Fiber* lanes[32] = {};
    uint32_t exists = lanes_of_warp(warp), waiting = 0;
    for (unsigned l = 0; l < 32 && (exists >> l & 1u); ++l) {
      lanes[l] = &b.fibers[warp * 32 + l];
      if (lanes[l]->state == State::kAtWarpOp) waiting |= 1u << l;
    }
    if (!waiting) continue;
    uint32_t members = 0;
    bool complete = true;
    for (unsigned l = 0; l < 32; ++l) {
      if (!(waiting >> l & 1u)) continue;
      Fiber* f = lanes[l];
      uint32_t wanted =
          (f->op == WarpOp::kActiveMask ? at_same_site(lanes, waiting, l) : f->mask) & exists;
      if ((wanted & waiting) != wanted) complete = false;
      members |= wanted;
    }
    if (complete) {
      resolve_warp(lanes, members & waiting);
      released = true;
    }
  }
  if (released) return "";
  unsigned live = 0, at_barrier = 0;
  const Fiber* stuck = nullptr;
  for (unsigned i = 0; i < b.count; ++i) {
    const Fiber& f = b.fibers[i];
    if (f.state == State::kDone) continue;
    ++live;
    if (f.state == State::kAtBarrier)
      ++at_barrier;
    else if (!stuck)
      stuck = &f;
  }
  if (live && at_barrier == live) {
    for (unsigned i = 0; i < b.count; ++i) {
      if (b.fibers[i].state == State::kAtBarrier) b.fibers[i].state = State::kRunnable;
    }
    return "";
  }
  std::string msg = "deadlock: " + std::to_string(at_barrier) + " of " + std::to_string(live) +
                    " live threads wait at __syncthreads";
  if (stuck)
    msg += ", " + describe(*stuck) +
           " waits at a warp collective whose mask names lanes that never arrive";
  return msg + " (divergent barrier or shuffle)";
}

inline void land_all_copies(Fiber& f) {
  for (const AsyncCopy& c : f.copies) std::memcpy(c.dst, c.src, c.bytes);
  f.copies.clear();
}

inline void fiber_entry(int index) {
  Block& b = block();
  b.body();
  land_all_copies(b.fibers[index]);  // copies still in flight land after the thread exits
  b.fibers[index].state = State::kDone;
  // returning resumes uc_link (the scheduler)
}

// Runs one block: every thread from its start to its end; "" or the reason it could not.
inline std::string run_block() {
  Block& b = block();
  for (unsigned i = 0; i < b.count; ++i) {
    Fiber& f = b.fibers[i];
    f = Fiber();
    f.linear = i;
    f.tid.x = i % b.dim.x;
    f.tid.y = i / b.dim.x % b.dim.y;
    f.tid.z = i / (b.dim.x * b.dim.y);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = b.stacks[i].data();
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &b.scheduler;
    makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiber_entry), 1, static_cast<int>(i));
  }
  for (;;) {
    bool ran = false, live = false;
    for (unsigned i = 0; i < b.count; ++i) {
      Fiber& f = b.fibers[i];
      if (f.state == State::kDone) continue;
      live = true;
      if (f.state != State::kRunnable) continue;
      b.current = &f;
      swapcontext(&b.scheduler, &f.ctx);
      if (!b.fault.empty()) return b.fault;
      ran = true;
    }
    if (!live) return "";
    if (!ran) {
      std::string err = release_waiters();
      if (!err.empty()) return err;
    }
  }
}

template <typename... A, size_t... I>
void call_kernel(void (*kernel)(A...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_reference_t<A>*>(args[I])...);
}

// The launch entry the mock driver calls: 0, or 1 with a message in err.
template <typename... A>
int launch(void (*kernel)(A...), void** args, const unsigned* grid, const unsigned* blk,
           unsigned shmem, char* err, size_t err_len) {
  auto fail = [&](const std::string& m) {
    std::snprintf(err, err_len, "%s", m.c_str());
    return 1;
  };
  unsigned threads = blk[0] * blk[1] * blk[2];
  if (threads == 0 || threads > kMaxThreads) return fail("block size out of range");
  if (shmem > kDynShmemBytes) return fail("dynamic shared memory over the emulator's 227 KiB");
  Block& b = block();
  if (b.fibers.size() < kMaxThreads) {
    b.fibers.resize(kMaxThreads);
    b.stacks.assign(kMaxThreads, std::vector<char>(kStackBytes));
  }
  b.count = threads;
  b.fault.clear();
  b.dim = Dim3{blk[0], blk[1], blk[2]};
  b.grid = Dim3{grid[0], grid[1], grid[2]};
  b.body = [&]() { call_kernel(kernel, args, std::index_sequence_for<A...>{}); };
  for (unsigned z = 0; z < grid[2]; ++z) {
    for (unsigned y = 0; y < grid[1]; ++y) {
      for (unsigned x = 0; x < grid[0]; ++x) {
        b.idx = Dim3{x, y, z};
        std::string e = run_block();
        if (!e.empty()) return fail(e);
      }
    }
  }
  return 0;
}

// ---------------------------------------------------------------- tensor-core instructions
// Modelled from NVIDIA's PTX ISA: with lane l, g = l / 4 and t = l % 4.

inline uint64_t collective(Collective fn, void* payload) {
  Fiber& f = self();
  f.collective = fn;
  f.payload = payload;
  return warp_op(WarpOp::kCustom, 0xffffffffu, 0, 0, 32);
}

// ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16: lanes 8j..8j+7 give the row addresses
// of matrix j; lane l receives in register j the elements (g, 2t) and (g, 2t + 1) of matrix j
// (of its transpose with .trans), the lower column in the low half.
struct LdMatrix {
  uint32_t* d;
  const uint16_t* row;
  int num;
  bool trans;
};

inline void ldmatrix_collective(void* const payloads[32], uint32_t members) {
  auto at = [&](int lane) { return static_cast<LdMatrix*>(payloads[lane]); };
  for (int l = 0; l < 32; ++l) {
    if (!(members >> l & 1u)) continue;
    int g = l / 4, t = l % 4;
    for (int j = 0; j < at(l)->num; ++j) {
      uint16_t lo, hi;
      if (at(l)->trans) {
        lo = at(8 * j + 2 * t)->row[g];
        hi = at(8 * j + 2 * t + 1)->row[g];
      } else {
        lo = at(8 * j + g)->row[2 * t];
        hi = at(8 * j + g)->row[2 * t + 1];
      }
      at(l)->d[j] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
    }
  }
}

inline void ldmatrix(uint32_t* d, const void* smem, int num, bool trans) {
  LdMatrix p{d, static_cast<const uint16_t*>(smem), num, trans};
  collective(&ldmatrix_collective, &p);
}

inline float half_to_float(uint16_t h);
inline float bf16_to_float(uint16_t h) { return from_bits<float>(static_cast<uint32_t>(h) << 16); }

// mma.sync.aligned.<shape>.row.col[.satfinite].<d>.<a>.<b>.<c> of the shapes m16n8k{4,8,16,32}
// and m8n8k{4,16}: a lane's fragment holds its elements packed lowest first, e per 32-bit
// register (e = 32 / bits; 1 for tf32 and f64). Element j of A (register r = j / e, i = j % e) is
// (g + 8 [m = 16 and r odd], t e + i + k/2 [r >= 2]); of B (k index, column) (t e + i + k/2 r, g);
// of C and D (g + 8 [j >= 2], 2t + j % 2).
inline uint16_t float_to_half(float f);
enum class MmaType { kF16, kBF16, kTF32, kF32, kF64, kS8, kU8, kS32 };

struct MmaSync {
  void* d;
  const void* a;
  const void* b;
  const void* c;
  int m, n, k;
  MmaType ta, tb, tc, td;
  bool satfinite;
};

inline int mma_per_register(MmaType t) {
  return t == MmaType::kF16 || t == MmaType::kBF16 ? 2
         : t == MmaType::kS8 || t == MmaType::kU8  ? 4
                                                   : 1;
}

inline double mma_get(const void* p, MmaType t, int j) {
  switch (t) {
    case MmaType::kF16:
      return half_to_float(static_cast<const uint16_t*>(p)[j]);
    case MmaType::kBF16:
      return bf16_to_float(static_cast<const uint16_t*>(p)[j]);
    case MmaType::kTF32:
      return from_bits<float>(static_cast<const uint32_t*>(p)[j] & 0xffffe000u);
    case MmaType::kF32:
      return static_cast<const float*>(p)[j];
    case MmaType::kF64:
      return static_cast<const double*>(p)[j];
    case MmaType::kS8:
      return static_cast<const int8_t*>(p)[j];
    case MmaType::kU8:
      return static_cast<const uint8_t*>(p)[j];
    case MmaType::kS32:
      return static_cast<const int32_t*>(p)[j];
  }
  return 0;
}

inline void mma_put(void* p, MmaType t, int j, double v, bool satfinite) {
  switch (t) {
    case MmaType::kF16:
      static_cast<uint16_t*>(p)[j] = float_to_half(static_cast<float>(v));
      return;
    case MmaType::kF32:
      static_cast<float*>(p)[j] = static_cast<float>(v);
      return;
    case MmaType::kF64:
      static_cast<double*>(p)[j] = v;
      return;
    case MmaType::kS8:
      static_cast<int8_t*>(p)[j] = static_cast<int8_t>(static_cast<int64_t>(v));
      return;
    case MmaType::kU8:
      static_cast<uint8_t*>(p)[j] = static_cast<uint8_t>(static_cast<int64_t>(v));
      return;
    case MmaType::kBF16:  // an element moved, not computed: its bits kept
      static_cast<uint16_t*>(p)[j] = static_cast<uint16_t>(to_bits(static_cast<float>(v)) >> 16);
      return;
    case MmaType::kTF32:
      static_cast<float*>(p)[j] = static_cast<float>(v);
      return;
    default: {  // s32: wraps, or clamps with .satfinite
      int64_t x = static_cast<int64_t>(v);
      if (satfinite) x = x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : x;
      static_cast<int32_t*>(p)[j] = static_cast<int32_t>(static_cast<uint32_t>(x));
    }
  }
}

inline void mma_sync_collective(void* const payloads[32], uint32_t members) {
  if (members != 0xffffffffu) return;
  const MmaSync& s = *static_cast<MmaSync*>(payloads[0]);
  double A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
  int ea = mma_per_register(s.ta), eb = mma_per_register(s.tb);
  for (int l = 0; l < 32; ++l) {
    const MmaSync* p = static_cast<MmaSync*>(payloads[l]);
    int g = l / 4, t = l % 4;
    for (int j = 0; j < s.m * s.k / 32; ++j) {
      int r = j / ea, i = j % ea;
      A[g + 8 * (s.m == 16 && r % 2)][t * ea + i + s.k / 2 * (r / 2)] = mma_get(p->a, s.ta, j);
    }
    for (int j = 0; j < s.k * s.n / 32; ++j) {
      int r = j / eb, i = j % eb;
      B[t * eb + i + s.k / 2 * r][g] = mma_get(p->b, s.tb, j);
    }
    for (int j = 0; j < s.m * s.n / 32; ++j)
      C[g + 8 * (j / 2)][2 * t + j % 2] = mma_get(p->c, s.tc, j);
  }
  for (int l = 0; l < 32; ++l) {
    const MmaSync* p = static_cast<MmaSync*>(payloads[l]);
    int g = l / 4, t = l % 4;
    for (int j = 0; j < s.m * s.n / 32; ++j) {
      int row = g + 8 * (j / 2), col = 2 * t + j % 2;
      double acc = C[row][col];
      for (int kk = 0; kk < s.k; ++kk) acc += A[row][kk] * B[kk][col];
      mma_put(p->d, s.td, j, acc, s.satfinite);
    }
  }
}

inline void mma_sync(void* d, const void* a, const void* b, const void* c, int m, int n, int k,
                     MmaType ta, MmaType tb, MmaType tc, MmaType td, bool satfinite) {
  MmaSync p{d, a, b, c, m, n, k, ta, tb, tc, td, satfinite};
  collective(&mma_sync_collective, &p);
}

// wmma.{load,store,mma}.sync.aligned (shapes m16n16k16, m8n32k16, m32n8k16; f16 inputs with
// f16 or f32 accumulators, s8/u8 inputs with s32 ones). PTX leaves the fragment layout
// unspecified; this model's: slot s of a lane (element s of its registers, lowest bits first)
// holds element (32 * s + lane) mod (rows * cols) of the tile, row-major, so every element has a
// slot and every lane a share. Addresses must be 32-byte aligned, as the hardware requires.
inline bool wmma_aligned(const void* p, const char* what) {
  if (reinterpret_cast<uintptr_t>(p) % 32 == 0) return true;
  if (block().fault.empty())
    block().fault =
        describe(self()) + ": " + what + " address is not 32-byte aligned (wmma needs it)";
  return false;
}

// The index of element (r, c) of a tile whose rows are stride elements apart (col: columns).
inline int wmma_index(int r, int c, int stride, bool col) {
  return col ? c * stride + r : r * stride + c;
}

inline void wmma_load(void* regs, const void* p, int stride, bool col, int rows, int cols,
                      MmaType t, int slots) {
  if (!wmma_aligned(p, "wmma.load")) return;
  for (int s = 0; s < slots; ++s) {
    int e = (32 * s + static_cast<int>(lane_id())) % (rows * cols), r = e / cols, c = e % cols;
    mma_put(regs, t, s, mma_get(p, t, wmma_index(r, c, stride, col)), false);
  }
}

inline void wmma_store(void* p, const void* regs, int stride, bool col, int rows, int cols,
                       MmaType t, int slots) {
  if (!wmma_aligned(p, "wmma.store")) return;
  for (int s = 0; s < slots; ++s) {
    int e = (32 * s + static_cast<int>(lane_id())) % (rows * cols), r = e / cols, c = e % cols;
    mma_put(p, t, wmma_index(r, c, stride, col), mma_get(regs, t, s), false);
  }
}

struct Wmma {
  void* d;
  const void* a;
  const void* b;
  const void* c;
  int m, n, k;
  MmaType td, ta, tb, tc;
  int a_slots, b_slots;
};

inline void wmma_mma_collective(void* const payloads[32], uint32_t members) {
  if (members != 0xffffffffu) return;
  const Wmma* first = static_cast<Wmma*>(payloads[0]);
  int m = first->m, n = first->n, k = first->k;
  std::vector<double> A(m * k), B(k * n), C(m * n);
  auto gather = [&](std::vector<double>& out, int count, const void* Wmma::* regs, MmaType t,
                    int slots) {
    for (int l = 0; l < 32; ++l)
      for (int s = 0; s < slots; ++s)
        out[(32 * s + l) % count] = mma_get(static_cast<Wmma*>(payloads[l])->*regs, t, s);
  };
  gather(A, m * k, &Wmma::a, first->ta, first->a_slots);
  gather(B, k * n, &Wmma::b, first->tb, first->b_slots);
  gather(C, m * n, &Wmma::c, first->tc, 8);
  for (int l = 0; l < 32; ++l) {
    const Wmma* p = static_cast<Wmma*>(payloads[l]);
    for (int s = 0; s < 8; ++s) {
      int e = (32 * s + l) % (m * n), r = e / n, c = e % n;
      double acc = C[e];
      for (int i = 0; i < k; ++i) acc += A[r * k + i] * B[i * n + c];
      // computed exactly (in double: products of 8-bit or half inputs), rounded once to D's type
      mma_put(p->d, p->td, s, p->td == MmaType::kS32 ? acc : static_cast<float>(acc), false);
    }
  }
}

inline void wmma_mma(void* d, const void* a, const void* b, const void* c, int m, int n, int k,
                     MmaType td, MmaType ta, MmaType tb, MmaType tc, int a_slots, int b_slots) {
  Wmma p{d, a, b, c, m, n, k, td, ta, tb, tc, a_slots, b_slots};
  collective(&wmma_mma_collective, &p);
}

// cp.async: a copy is queued in the thread's current group and lands (reads global, writes
// shared) when cp.async.wait_group lets fewer groups than it names stay pending.
inline void cp_async(void* smem, const void* gmem, unsigned bytes) {
  Fiber& f = self();
  f.copies.push_back(AsyncCopy{smem, gmem, bytes, f.committed});
}

inline void cp_async_commit() { ++self().committed; }

inline void cp_async_wait(unsigned pending_groups) {
  Fiber& f = self();
  std::vector<AsyncCopy> keep;
  for (const AsyncCopy& c : f.copies) {
    bool lands = c.group + pending_groups < f.committed;  // uncommitted copies belong to no group
    if (lands)
      std::memcpy(c.dst, c.src, c.bytes);
    else
      keep.push_back(c);
  }
  f.copies.swap(keep);
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = h >> 10 & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float f = std::ldexp(static_cast<float>(m), -24);
    return sign ? -f : f;
  }
  uint32_t bits = e == 31 ? (sign | 0x7f800000u | m << 13) : (sign | (e + 112u) << 23 | m << 13);
  return from_bits<float>(bits);
}

inline uint16_t float_to_half(float f) {  // round to nearest even, like cvt.rn.f16.f32
  uint32_t x = static_cast<uint32_t>(to_bits(f)), sign = x >> 16 & 0x8000u;
  float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 6.103515625e-05f) {  // subnormal half: a multiple of 2^-24, rounded half to even
    float q = std::nearbyint(std::ldexp(a, 24));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(q));
  }
  uint32_t ax = x & 0x7fffffffu;
  uint32_t mant = ax & 0x7fffffu, exp = (ax >> 23) - 112u;
  uint32_t h = exp << 10 | mant >> 13, rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

}  // namespace tvm_emu

// The CUDA C surface the generated kernels use.
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define threadIdx (::tvm_emu::self().tid)
#define blockIdx (::tvm_emu::block().idx)
#define blockDim (::tvm_emu::block().dim)
#define gridDim (::tvm_emu::block().grid)

inline void __syncthreads() { tvm_emu::syncthreads(); }
inline void __syncwarp(uint32_t mask = 0xffffffffu) {
  tvm_emu::warp_op(tvm_emu::WarpOp::kSync, mask, 0, 0, 32);
}
// Each call site is numbered (__COUNTER__), so that the lanes of two arms get their own masks.
#define __activemask() \
  static_cast<uint32_t>(tvm_emu::warp_op(tvm_emu::WarpOp::kActiveMask, 0, 0, __COUNTER__, 32))
inline uint32_t __ballot_sync(uint32_t mask, int pred) {
  return static_cast<uint32_t>(tvm_emu::warp_op(tvm_emu::WarpOp::kBallot, mask, pred != 0, 0, 32));
}
#define TVM_EMU_SHFL(name, kind)                                                          \
  template <typename T>                                                                   \
  T name(uint32_t mask, T v, int lane, int width = 32) {                                  \
    return tvm_emu::from_bits<T>(                                                         \
        tvm_emu::warp_op(tvm_emu::WarpOp::kind, mask, tvm_emu::to_bits(v), lane, width)); \
  }
TVM_EMU_SHFL(__shfl_sync, kShflIdx)
TVM_EMU_SHFL(__shfl_up_sync, kShflUp)
TVM_EMU_SHFL(__shfl_down_sync, kShflDown)
TVM_EMU_SHFL(__shfl_xor_sync, kShflXor)
#undef TVM_EMU_SHFL

// CUDA's classification functions, unqualified as the generated code calls them.
using std::isfinite;
using std::isinf;
using std::isnan;

inline float __int_as_float(int v) { return tvm_emu::from_bits<float>(static_cast<uint32_t>(v)); }
inline float __uint_as_float(uint32_t v) { return tvm_emu::from_bits<float>(v); }
inline int __float_as_int(float f) { return static_cast<int>(tvm_emu::to_bits(f)); }
inline uint32_t __float_as_uint(float f) { return static_cast<uint32_t>(tvm_emu::to_bits(f)); }
// Rounded once and never fused into an FMA (the host compiler may contract a * b + c otherwise).
inline float __fadd_rn(float a, float b) {
  volatile float r = a + b;
  return r;
}
inline float __fmul_rn(float a, float b) {
  volatile float r = a * b;
  return r;
}
inline double __longlong_as_double(long long v) {
  return tvm_emu::from_bits<double>(static_cast<uint64_t>(v));
}
inline long long __double_as_longlong(double d) {
  return static_cast<long long>(tvm_emu::to_bits(d));
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

// Dynamic shared memory: the module's file-scope `extern __shared__ ... tvm_dyn_shmem[]`, which
// cuda_on_cpu.py turns into `using ::tvm_dyn_shmem;`, names this.
extern "C" {
alignas(16) unsigned char tvm_dyn_shmem[tvm_emu::kDynShmemBytes];
}

#define TVM_EMU_KERNEL(name)                                                                     \
  extern "C" int tvm_emu_launch_##name(void** args, const unsigned* grid, const unsigned* block, \
                                       unsigned shmem, char* err, size_t err_len) {              \
    return tvm_emu::launch(&tvm_emu_kernels::name, args, grid, block, shmem, err, err_len);      \
  }
