// Runs the HIP our code generator produced on the CPU, on the kit's emulator of CUDA-dialect
// kernels (tvm/testing/gpu_on_cpu.h): its AMDGPU builtins become the emulator's thread and block
// indices and barrier, and each kernel gets an entry that takes the packed argument buffer
// hipModuleLaunchKernel received (the mock HIP library calls it), unpacking it at each parameter's
// natural alignment: a packing the runtime got wrong shows as wrong results.
#pragma once

#include "gpu_on_cpu.h"

#define __builtin_amdgcn_workitem_id_x() (::tvm_emu::self().tid.x)
#define __builtin_amdgcn_workitem_id_y() (::tvm_emu::self().tid.y)
#define __builtin_amdgcn_workitem_id_z() (::tvm_emu::self().tid.z)
#define __builtin_amdgcn_workgroup_id_x() (::tvm_emu::block().idx.x)
#define __builtin_amdgcn_workgroup_id_y() (::tvm_emu::block().idx.y)
#define __builtin_amdgcn_workgroup_id_z() (::tvm_emu::block().idx.z)
#define __builtin_amdgcn_s_barrier() ::tvm_emu::syncthreads()
#define __builtin_amdgcn_wave_barrier() __syncwarp(__activemask())
#define __builtin_amdgcn_fence(...) ((void)0)
#define amdgpu_flat_work_group_size(...)
// T.rocm on the emulator's 32-lane warps, as on a wave32 GPU (gfx1100)
#define __AMDGCN_WAVEFRONT_SIZE 32
#define __builtin_amdgcn_mbcnt_lo(mask, base) (::tvm_emu::lane_id() + (base))
#define __builtin_amdgcn_ds_bpermute(addr, v) __shfl_sync(0xffffffffu, (int)(v), (addr) >> 2, 32)

namespace tvm_emu {

template <typename... A>
int launch_packed(void (*kernel)(A...), const char* buffer, size_t size, const unsigned* grid,
                  const unsigned* blk, unsigned shmem, char* err, size_t err_len) {
  constexpr size_t n = sizeof...(A);
  const size_t sizes[n + 1] = {sizeof(std::remove_reference_t<A>)..., 0};
  void* args[n + 1] = {};
  size_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    offset = (offset + sizes[i] - 1) / sizes[i] * sizes[i];
    if (offset + sizes[i] > size) {
      std::snprintf(err, err_len, "argument %zu lies past the %zu-byte argument buffer", i, size);
      return 1;
    }
    args[i] = const_cast<char*>(buffer) + offset;
    offset += sizes[i];
  }
  return launch(kernel, args, grid, blk, shmem, err, err_len);
}

}  // namespace tvm_emu

#define TVM_EMU_HIP_KERNEL(name)                                                                 \
  extern "C" int tvm_emu_launch_packed_##name(const char* buffer, size_t size,                   \
                                              const unsigned* grid, const unsigned* block,       \
                                              unsigned shmem, char* err, size_t err_len) {       \
    return tvm_emu::launch_packed(&tvm_emu_kernels::name, buffer, size, grid, block, shmem, err, \
                                  err_len);                                                      \
  }
