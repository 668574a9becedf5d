//===- Runtime.h - The LMS runtime: C ABI -----------------------*- C -*-===//
//
// liblms_runtime.so implements the `mgpu*` functions that MLIR's
// --gpu-to-llvm emits (streams, events, allocation, copies, memsets, host
// registration, kernel modules) on one of two backends:
//
//  - cuda: cudart (driver entry points through cudaGetDriverEntryPoint);
//    every call is checked, an error prints what failed and aborts;
//  - emulated: device memory in host memory with a capacity, copies that
//    complete late on a thread per stream (in stream order), poisoned fresh
//    and freed memory, and statistics.
//
// Host staging memory comes from a pinned pool (reused by size, capped by
// LMS_PINNED_BYTES) through calls of the runtime's own, which
// --convert-lms-to-gpu emits: `lmsStagingAlloc` and `lmsStagingFree`.
// (`mgpuMemAlloc(bytes, stream, isHostShared = true)` is served from the same
// pool, for IR written for upstream's runtime, where `gpu.alloc host_shared`
// means managed memory.)
//
// Environment:
//   LMS_RUNTIME=emulated|cuda   the backend (default: cuda when a GPU is
//                               visible, else emulated, with a notice)
//   LMS_DEVICE_BYTES=<size>     emulated device capacity (default 16GiB)
//   LMS_PINNED_BYTES=<size>     cap of the pinned staging pool (default: none)
//   LMS_COPY_DELAY_US=<n>       emulated copy latency (default 200)
//   LMS_RUNTIME_STATS=<file>    write the statistics JSON there at exit
//                               ("-" for stderr)
//
//===----------------------------------------------------------------------===//

#ifndef LMS_RUNTIME_RUNTIME_H
#define LMS_RUNTIME_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Writes the statistics JSON to `path` ("-" or null: stderr):
/// {"backend", "peak_device_bytes", "device_bytes_in_use",
///  "device_allocations", "h2d_bytes", "d2h_bytes", "d2d_bytes",
///  "h2d_copies", "d2h_copies", "d2d_copies", "pinned_bytes",
///  "pinned_peak_bytes", "pinned_allocations", "pinned_reuses",
///  "leaked_bytes", "leaked_allocations"}.
void lmsRuntimeWriteStats(const char *path);

/// The name of the backend in use ("emulated" or "cuda").
const char *lmsRuntimeBackend(void);

/// Peak device bytes so far.
uint64_t lmsRuntimePeakDeviceBytes(void);

/// A memref<?xi8> descriptor (the C interface of a ranked memref).
typedef struct LMSStagingDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} LMSStagingDescriptor;

/// `func.func private @lmsStagingAlloc(index) -> memref<?xi8>
/// attributes {llvm.emit_c_interface}`: a pinned staging buffer of `bytes`.
void _mlir_ciface_lmsStagingAlloc(LMSStagingDescriptor *result, int64_t bytes);

/// `func.func private @lmsStagingFree(index)`: the staging buffer whose
/// aligned address is `address` goes back to the pool once every copy
/// already issued into or out of it is done; the host does not wait. Freeing
/// anything else, or twice, is an error.
void lmsStagingFree(intptr_t address);

/// The number of CUDA devices visible (0 without CUDA support or a driver),
/// without choosing a backend.
int lmsRuntimeCudaDeviceCount(void);

#ifdef __cplusplus
}
#endif

#endif /* LMS_RUNTIME_RUNTIME_H */
