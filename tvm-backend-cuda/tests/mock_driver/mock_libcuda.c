/*
 * A stand-in libcuda.so.1 for CPU-only machines: enough of the driver API for the tests to drive
 * libtvm_runtime_cuda end to end. "Device" memory is host memory; cuLaunchKernel records every
 * launch for the tests to inspect and runs the kernel on the host when it can: generated kernels
 * through a CPU build of their CUDA C registered with mock_add_emulator (the kit's
 * tvm/testing/gpu_on_cpu.h), and a few hand-written test kernels by name. Written for this
 * project's tests; it is not NVIDIA's driver and implements no GPU semantics.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define OK 0
#define ERR_INVALID_VALUE 1
#define ERR_INVALID_IMAGE 200
#define ERR_NOT_FOUND 500
#define ERR_LAUNCH_OUT_OF_RESOURCES 701
#define ERR_LAUNCH_FAILED 719

typedef struct {
  char* image;
  size_t size;
} MockModule;
typedef struct {
  MockModule* mod;
  char name[256];
  int max_dyn_shmem;
} MockFunction;

/* What the last launch looked like: read by the tests through ctypes. */
typedef struct {
  char name[256];
  unsigned grid[3], block[3], shmem;
  void* stream;
  int launches;
  int max_dyn_shmem_attr;
} MockLaunch;
MockLaunch mock_last_launch;
int mock_context_current = 0;
/* Calls the tests count: attribute queries by attribute, stream calls with their last handle. */
int mock_attr_queries[128];
int mock_stream_destroys = 0, mock_stream_syncs = 0;
unsigned mock_last_stream_flags = 0xffffffffu;
void* mock_last_stream_synced = NULL;

/* MOCK_CUDA_DEVICES=n pretends to have n devices (default 1), for multi-device argument checks. */
static int device_count(void) {
  const char* s = getenv("MOCK_CUDA_DEVICES");
  return s && atoi(s) > 0 ? atoi(s) : 1;
}

CUresult cuInit(unsigned flags) { return OK; }
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return OK;
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case OK:
      *s = "CUDA_SUCCESS";
      break;
    case ERR_INVALID_VALUE:
      *s = "CUDA_ERROR_INVALID_VALUE";
      break;
    case ERR_INVALID_IMAGE:
      *s = "CUDA_ERROR_INVALID_IMAGE";
      break;
    case ERR_NOT_FOUND:
      *s = "CUDA_ERROR_NOT_FOUND";
      break;
    case ERR_LAUNCH_OUT_OF_RESOURCES:
      *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
      break;
    case ERR_LAUNCH_FAILED:
      *s = "CUDA_ERROR_LAUNCH_FAILED";
      break;
    default:
      *s = "CUDA_ERROR_UNKNOWN";
  }
  return OK;
}
/* Why the last emulated launch failed (the kit's tvm/testing/gpu_on_cpu.h). */
static char emulator_error[1024];
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == ERR_LAUNCH_FAILED && emulator_error[0] ? emulator_error : "mock driver error";
  return OK;
}
CUresult cuDeviceGetCount(int* n) {
  *n = device_count();
  return OK;
}
CUresult cuDeviceGet(int* d, int ordinal) {
  if (ordinal < 0 || ordinal >= device_count()) return ERR_INVALID_VALUE;
  *d = ordinal;
  return OK;
}
CUresult cuDeviceGetName(char* name, int len, int dev) {
  snprintf(name, len, "Mock GPU (tests)");
  return OK;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (attr >= 0 && attr < 128) mock_attr_queries[attr]++;
  switch (attr) {
    case 1:
      *v = 1024;
      break; /* max threads per block */
    case 2:
      *v = 1024;
      break;
    case 3:
      *v = 1024;
      break;
    case 4:
      *v = 64;
      break;
    case 5:
      *v = 2147483647;
      break; /* max grid dims */
    case 6:
      *v = 65535;
      break;
    case 7:
      *v = 65535;
      break;
    case 8:
      *v = 49152;
      break; /* shared memory per block */
    case 10:
      *v = 32;
      break; /* warp size */
    case 13:
      *v = 1980000;
      break; /* clock kHz */
    case 16:
      *v = 132;
      break; /* SMs */
    case 75:
      *v = 9;
      break; /* compute capability */
    case 76:
      *v = 0;
      break;
    case 97:
      *v = 232448;
      break;
    default:
      return ERR_INVALID_VALUE;
  }
  return OK;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  *bytes = (size_t)80 << 30;
  return OK;
}
static int primary_ctx;
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  *ctx = &primary_ctx;
  return OK;
}
CUresult cuCtxGetCurrent(void** ctx) {
  *ctx = mock_context_current ? &primary_ctx : NULL;
  return OK;
}
CUresult cuCtxSetCurrent(void* ctx) {
  mock_context_current = ctx == &primary_ctx;
  return OK;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  void* m = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m) return ERR_INVALID_VALUE;
  *p = (CUdeviceptr)(uintptr_t)m;
  return OK;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void*)(uintptr_t)p);
  return OK;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) {
  memcpy((void*)(uintptr_t)d, s, n);
  return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) {
  memcpy(d, (void*)(uintptr_t)s, n);
  return OK;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) {
  memcpy((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return OK;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr d, void* dc, CUdeviceptr s, void* sc, size_t n, void* st) {
  return ERR_INVALID_VALUE;
}
CUresult cuPointerGetAttribute(void* out, int attr, CUdeviceptr p) {
  if (attr != 9) return ERR_INVALID_VALUE;
  *(int*)out = 0;
  return OK;
}
static int stream_storage[64];
static int next_stream = 0;
CUresult cuStreamCreate(void** s, unsigned flags) {
  mock_last_stream_flags = flags;
  *s = &stream_storage[next_stream++ % 64];
  return OK;
}
CUresult cuStreamDestroy_v2(void* s) {
  mock_stream_destroys++;
  return OK;
}
CUresult cuStreamSynchronize(void* s) {
  mock_stream_syncs++;
  mock_last_stream_synced = s;
  return OK;
}

CUresult cuModuleLoadDataEx(MockModule** mod, const void* image, unsigned n, int* opts,
                            void** vals) {
  const char* img = (const char*)image;
  size_t size;
  if (memcmp(img,
             "\x7f"
             "ELF",
             4) == 0) {
    /* ELF: size from the section header table end, as the driver finds it (no size is given). */
    uint64_t shoff;
    uint16_t shentsize, shnum, machine;
    memcpy(&shoff, img + 0x28, 8);
    memcpy(&shentsize, img + 0x3a, 2);
    memcpy(&shnum, img + 0x3c, 2);
    memcpy(&machine, img + 0x12, 2);
    size = shoff + (size_t)shentsize * shnum;
    if (machine != 190) { /* EM_CUDA */
      for (unsigned i = 0; i < n; ++i) {
        if (opts[i] == 5) snprintf((char*)vals[i], 64, "mock: not a CUDA ELF object");
      }
      return ERR_INVALID_IMAGE;
    }
  } else if (strstr(img, ".entry") != NULL) {
    size = strlen(img);
  } else {
    for (unsigned i = 0; i < n; ++i) {
      if (opts[i] == 5) snprintf((char*)vals[i], 64, "mock: not a cubin or PTX image");
    }
    return ERR_INVALID_IMAGE;
  }
  MockModule* m = (MockModule*)malloc(sizeof(MockModule));
  m->image = (char*)malloc(size + 1);
  memcpy(m->image, img, size);
  m->image[size] = 0;
  m->size = size;
  *mod = m;
  return OK;
}
CUresult cuModuleUnload(MockModule* m) {
  free(m->image);
  free(m);
  return OK;
}
CUresult cuModuleGetFunction(MockFunction** f, MockModule* m, const char* name) {
  size_t len = strlen(name);
  int found = 0;
  for (size_t i = 0; i + len <= m->size && !found; ++i) {
    if (memcmp(m->image + i, name, len) == 0 &&
        (i + len == m->size || m->image[i + len] == 0 || m->image[i + len] == '(' ||
         m->image[i + len] == '\n'))
      found = 1;
  }
  if (!found) return ERR_NOT_FOUND;
  MockFunction* fn = (MockFunction*)calloc(1, sizeof(MockFunction));
  fn->mod = m;
  snprintf(fn->name, sizeof(fn->name), "%s", name);
  *f = fn;
  return OK;
}
CUresult cuFuncSetAttribute(MockFunction* f, int attr, int value) {
  if (attr != 8 || value > 232448) return ERR_INVALID_VALUE;
  f->max_dyn_shmem = value;
  mock_last_launch.max_dyn_shmem_attr = value;
  return OK;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  if (e == 0) {
    float f = (float)m * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  bits = e == 31 ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e + 112u) << 23) | (m << 13));
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Kernels compiled for the CPU by tests/cuda_on_cpu.py: libraries registered here are searched
 * (newest first) for tvm_emu_launch_<kernel>, which runs the generated CUDA C on the host. */
typedef int (*EmuLaunch)(void**, const unsigned*, const unsigned*, unsigned, char*, size_t);
static void* emulators[64];
static int n_emulators = 0;

int mock_add_emulator(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "mock: %s\n", dlerror());
    return 0;
  }
  if (n_emulators == 64) return 0;
  emulators[n_emulators++] = lib;
  return 1;
}

/* 1 when an emulator ran the kernel; *ok then says whether it succeeded. */
static int run_emulated(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, void** args,
                        unsigned long long* ok) {
  char sym[300];
  snprintf(sym, sizeof(sym), "tvm_emu_launch_%s", name);
  for (int i = n_emulators - 1; i >= 0; --i) {
    EmuLaunch fn = (EmuLaunch)dlsym(emulators[i], sym);
    if (!fn) continue;
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    emulator_error[0] = 0;
    *ok = fn(args, grid, block, shmem, emulator_error, sizeof(emulator_error)) == 0;
    return 1;
  }
  return 0;
}

CUresult cuLaunchKernel(MockFunction* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, void* stream, void** args,
                        void** extra) {
  if ((unsigned long long)bx * by * bz > 1024) return ERR_LAUNCH_OUT_OF_RESOURCES;
  if (shmem > 49152 && (int)shmem > f->max_dyn_shmem) return ERR_INVALID_VALUE;
  snprintf(mock_last_launch.name, sizeof(mock_last_launch.name), "%s", f->name);
  mock_last_launch.grid[0] = gx;
  mock_last_launch.grid[1] = gy;
  mock_last_launch.grid[2] = gz;
  mock_last_launch.block[0] = bx;
  mock_last_launch.block[1] = by;
  mock_last_launch.block[2] = bz;
  mock_last_launch.shmem = shmem;
  mock_last_launch.stream = stream;
  mock_last_launch.launches++;
  unsigned long long threads = (unsigned long long)gx * bx;
  if (run_emulated(f->name, gx, gy, gz, bx, by, bz, shmem, args, &threads)) {
    return threads ? OK : ERR_LAUNCH_FAILED;
  }
  if (strstr(f->name, "vadd") != NULL) { /* (float* A, float* B, float* C, int32 n) */
    float* a = *(float**)args[0];
    float* b = *(float**)args[1];
    float* c = *(float**)args[2];
    int n = *(int32_t*)args[3];
    for (unsigned long long i = 0; i < threads && (long long)i < n; ++i) c[i] = a[i] + b[i];
  } else if (strcmp(f->name, "scalars") == 0) {
    /* (double* out, int8, int64, float32, float64, float16 bits, bool) -> out[0..5] */
    double* out = *(double**)args[0];
    out[0] = *(int8_t*)args[1];
    out[1] = (double)*(int64_t*)args[2];
    out[2] = *(float*)args[3];
    out[3] = *(double*)args[4];
    out[4] = half_to_float(*(uint16_t*)args[5]);
    out[5] = *(uint8_t*)args[6];
  }
  return OK;
}

/* NVRTC itself probes libcuda.so.1 for private tables: say there are none. */
CUresult cuGetExportTable(const void** table, const void* id) {
  *table = NULL;
  return ERR_NOT_FOUND;
}
