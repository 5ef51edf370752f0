/*
 * A stand-in libamdhip64 for machines without an AMD GPU: enough of the HIP runtime for the
 * tests to drive libtvm_runtime_rocm end to end. "Device" memory is host memory; a module loads
 * when its code object is an AMDGPU ELF for the mock's architecture (MOCK_HIP_ARCH, default
 * gfx90a); a launch records its function, dimensions and kernel-argument buffer for the tests to
 * compare with the code object's own metadata, and runs the kernel on the CPU when a CPU build of
 * its HIP is registered with mock_add_emulator (tests/hip_on_cpu.py, mock_hip/hip_on_cpu.h).
 * Written for this project's tests; it is not AMD's runtime and implements no GPU semantics.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
enum { OK = 0, ERR_INVALID_VALUE = 1, ERR_NO_BINARY = 209, ERR_NOT_FOUND = 500, ERR_LAUNCH = 719 };

typedef struct {
  char* image;
  size_t size;
} MockModule;
typedef struct {
  char name[256];
} MockFunction;

/* The last launch, read by the tests through ctypes. */
typedef struct {
  char name[256];
  unsigned grid[3], block[3], shmem;
  void* stream;
  int launches;
  size_t args_size;
  unsigned char args[4096];
} MockLaunch;
MockLaunch mock_last_launch;
int mock_current_device = -1;

static const char* arch(void) {
  const char* a = getenv("MOCK_HIP_ARCH");
  return a && *a ? a : "gfx90a";
}

/* EF_AMDGPU_MACH (the low byte of e_flags) of the architectures the tests use. */
static unsigned mach_of(const char* a) {
  if (strcmp(a, "gfx90a") == 0) return 0x3f;
  if (strcmp(a, "gfx942") == 0) return 0x4c;
  if (strcmp(a, "gfx1100") == 0) return 0x41;
  return 0;
}

hipError_t hipInit(unsigned flags) { return OK; }
hipError_t hipDriverGetVersion(int* v) {
  *v = 60300000;
  return OK;
}
const char* hipGetErrorName(hipError_t e) {
  switch (e) {
    case ERR_INVALID_VALUE:
      return "hipErrorInvalidValue";
    case ERR_NO_BINARY:
      return "hipErrorNoBinaryForGpu";
    case ERR_NOT_FOUND:
      return "hipErrorNotFound";
    case ERR_LAUNCH:
      return "hipErrorLaunchFailure";
    default:
      return "hipSuccess";
  }
}
/* Why the last emulated launch failed (the kit's tvm/testing/gpu_on_cpu.h). */
char mock_emulator_error[512];
const char* hipGetErrorString(hipError_t e) {
  if (e == ERR_LAUNCH && mock_emulator_error[0]) return mock_emulator_error;
  return e ? "mock HIP error" : "no error";
}
hipError_t hipGetDeviceCount(int* n) {
  const char* s = getenv("MOCK_HIP_DEVICES");
  *n = s && atoi(s) > 0 ? atoi(s) : 1;
  return OK;
}
hipError_t hipSetDevice(int d) {
  mock_current_device = d;
  return OK;
}
hipError_t hipDeviceGetName(char* name, int len, int d) {
  strncpy(name, "Mock AMD GPU", (size_t)len);
  return OK;
}
hipError_t hipDeviceGetAttribute(int* v, int attr, int d) {
  int wave32 = strncmp(arch(), "gfx1", 4) == 0;
  switch (attr) {
    case 5:
      *v = 1700000;
      return OK; /* ClockRate (kHz) */
    case 23:
      *v = wave32 ? 11 : 9;
      return OK; /* ComputeCapabilityMajor */
    case 61:
      *v = 0;
      return OK; /* ComputeCapabilityMinor */
    case 26:
    case 27:
    case 28:
      *v = 1024;
      return OK; /* MaxBlockDim */
    case 29:
      *v = 2147483647;
      return OK; /* MaxGridDimX */
    case 30:
    case 31:
      *v = 65535;
      return OK; /* MaxGridDimY, Z */
    case 56:
      *v = 1024;
      return OK; /* MaxThreadsPerBlock */
    case 63:
      *v = 104;
      return OK; /* MultiprocessorCount */
    case 74:
      *v = 65536;
      return OK; /* MaxSharedMemoryPerBlock */
    case 87:
      *v = wave32 ? 32 : 64;
      return OK; /* WarpSize */
    default:
      return ERR_INVALID_VALUE;
  }
}
hipError_t hipDeviceTotalMem(size_t* bytes, int d) {
  *bytes = (size_t)64 << 30;
  return OK;
}
hipError_t hipMalloc(void** p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? OK : 2;
}
hipError_t hipFree(void* p) {
  free(p);
  return OK;
}
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, int kind, void* stream) {
  memcpy(dst, src, n);
  return OK;
}
hipError_t hipStreamCreateWithFlags(void** s, unsigned flags) {
  *s = malloc(1);
  return OK;
}
hipError_t hipStreamDestroy(void* s) {
  free(s);
  return OK;
}
hipError_t hipStreamSynchronize(void* s) { return OK; }

/* The object's size is not passed: an ELF's section headers end it (e_shoff + e_shnum *
 * e_shentsize). */
hipError_t hipModuleLoadData(MockModule** m, const void* image) {
  const unsigned char* p = image;
  if (memcmp(p,
             "\x7f"
             "ELF",
             4) != 0)
    return 200; /* hipErrorInvalidImage */
  uint16_t machine, shentsize, shnum;
  uint32_t flags;
  uint64_t shoff;
  memcpy(&machine, p + 18, 2);
  memcpy(&flags, p + 48, 4);
  memcpy(&shoff, p + 40, 8);
  memcpy(&shentsize, p + 58, 2);
  memcpy(&shnum, p + 60, 2);
  if (machine != 0xe0 || (flags & 0xff) != mach_of(arch())) return ERR_NO_BINARY;
  MockModule* mod = malloc(sizeof(MockModule));
  mod->size = shoff + (size_t)shnum * shentsize;
  mod->image = malloc(mod->size);
  memcpy(mod->image, image, mod->size);
  *m = mod;
  return OK;
}
hipError_t hipModuleUnload(MockModule* m) {
  free(m->image);
  free(m);
  return OK;
}
/* A kernel exists when its descriptor symbol "<name>.kd" is in the object's string table. */
hipError_t hipModuleGetFunction(MockFunction** f, MockModule* m, const char* name) {
  char kd[300];
  size_t n = (size_t)snprintf(kd, sizeof(kd), "%s.kd", name) + 1; /* with the terminator */
  for (size_t i = 0; i + n <= m->size; ++i) {
    if (memcmp(m->image + i, kd, n) == 0 && (i == 0 || m->image[i - 1] == '\0')) {
      *f = calloc(1, sizeof(MockFunction));
      strncpy((*f)->name, name, sizeof((*f)->name) - 1);
      return OK;
    }
  }
  return ERR_NOT_FOUND;
}
/* CPU builds of generated kernels: searched newest first for tvm_emu_launch_packed_<kernel>. */
typedef int (*EmuLaunch)(const char*, size_t, const unsigned*, const unsigned*, unsigned, char*,
                         size_t);
static void* emulators[64];
static int n_emulators = 0;
int mock_add_emulator(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib || n_emulators == 64) return 0;
  emulators[n_emulators++] = lib;
  return 1;
}

/* 0: no emulator has the kernel; 1: it ran; -1: it failed (mock_emulator_error says why). */
static int run_emulated(const char* name, const unsigned* grid, const unsigned* block,
                        unsigned shmem, const char* args, size_t size) {
  char sym[300];
  snprintf(sym, sizeof(sym), "tvm_emu_launch_packed_%s", name);
  for (int i = n_emulators - 1; i >= 0; --i) {
    EmuLaunch fn = (EmuLaunch)dlsym(emulators[i], sym);
    if (!fn) continue;
    mock_emulator_error[0] = 0;
    return fn(args, size, grid, block, shmem, mock_emulator_error, sizeof(mock_emulator_error)) == 0
               ? 1
               : -1;
  }
  return 0;
}

hipError_t hipModuleLaunchKernel(MockFunction* f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                 void* stream, void** params, void** extra) {
  if (getenv("MOCK_HIP_FAIL_LAUNCH")) return ERR_LAUNCH;
  /* extra = {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END} */
  if (params != NULL || extra == NULL || extra[0] != (void*)1 || extra[2] != (void*)2 ||
      extra[4] != (void*)3) {
    return ERR_INVALID_VALUE;
  }
  size_t size = *(size_t*)extra[3];
  if (size > sizeof(mock_last_launch.args)) return ERR_INVALID_VALUE;
  strncpy(mock_last_launch.name, f->name, sizeof(mock_last_launch.name) - 1);
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  memcpy(mock_last_launch.grid, g, sizeof(g));
  memcpy(mock_last_launch.block, b, sizeof(b));
  mock_last_launch.shmem = shmem;
  mock_last_launch.stream = stream;
  mock_last_launch.args_size = size;
  memcpy(mock_last_launch.args, extra[1], size);
  mock_last_launch.launches++;
  return run_emulated(f->name, g, b, shmem, extra[1], size) < 0 ? ERR_LAUNCH : OK;
}
