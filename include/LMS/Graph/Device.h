//===- Device.h - Device descriptions and op timing -------------*- C++ -*-===//
//
// What a planner needs to know about an accelerator: its memory capacity, its
// compute and memory throughput, and the host link in each direction. Presets
// describe common GPUs; the Analysis layer also reads a DLTI target spec.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_DEVICE_H
#define LMS_GRAPH_DEVICE_H

#include "LMS/Graph/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace lms {

struct DeviceSpec {
  std::string name;
  /// Device memory a process can use, in bytes (the default budget): for a
  /// preset, what the driver reports as the GPU's total memory less a
  /// reserve for the CUDA context and library workspaces.
  uint64_t capacityBytes = 0;
  /// Sustained floating-point throughput, FLOP/s.
  double peakFlops = 0;
  /// Device memory bandwidth, bytes/s.
  double memoryBandwidth = 0;
  /// Host-to-device and device-to-host bandwidth from pinned memory, bytes/s.
  double h2dBandwidth = 0;
  double d2hBandwidth = 0;
  /// Fixed cost of launching one op (kernel launch, dispatch), seconds.
  double opOverhead = 0;
  /// Fixed latency of one host<->device copy, seconds.
  double copyLatency = 0;
  /// Host memory one GPU of the preset's reference system may pin for its
  /// offloaded tensors (the default host budget): the system's memory
  /// divided by its GPUs (docs/UserGuide.md gives the systems).
  uint64_t hostCapacityBytes = 0;
  /// The memory on the card as its datasheet states it (0: not given).
  uint64_t physicalBytes = 0;

  /// Roofline time of an op: max(flops / peak, bytes / bandwidth) plus the
  /// launch overhead, or the fixed time of the cost when it has one.
  double computeSeconds(const OpCost &cost) const;
  /// Time of copying `bytes` to the host / to the device.
  double d2hSeconds(uint64_t bytes) const;
  double h2dSeconds(uint64_t bytes) const;
};

/// The built-in presets, in a stable order.
llvm::ArrayRef<DeviceSpec> getDevicePresets();

/// The preset with this name, or nullopt.
std::optional<DeviceSpec> lookupDevicePreset(llvm::StringRef name);

/// "v100-16g, v100-32g-nvlink, ..." for diagnostics and help texts.
std::string listDevicePresets();

/// The preset used when none is given.
llvm::StringRef getDefaultDevicePreset();

} // namespace lms

#endif // LMS_GRAPH_DEVICE_H
