//===- DeviceModel.h - The device a program is planned for ------*- C++ -*-===//
//
// Resolves the DeviceSpec of the graph core for a program: a preset named by
// an option, else a DLTI target spec on the module, else the default preset.
//
// The DLTI form: a device entry of the module's `dlti.target_system_spec`
// with any of these keys (bandwidths in bytes/s, sizes in bytes):
//
//   module attributes {dlti.target_system_spec = #dlti.target_system_spec<
//     "GPU" = #dlti.target_device_spec<
//       "lms.preset" = "a100-40g",              // base preset (optional)
//       "lms.capacity_bytes" = 42949672960 : i64,
//       "lms.peak_flops" = 1.95e13 : f64,
//       "lms.memory_bandwidth" = 1.555e12 : f64,
//       "lms.h2d_bandwidth" = 2.4e10 : f64,
//       "lms.d2h_bandwidth" = 2.4e10 : f64,
//       "lms.op_overhead" = 4.0e-6 : f64>>} { ... }
//
//===----------------------------------------------------------------------===//

#ifndef LMS_ANALYSIS_DEVICEMODEL_H
#define LMS_ANALYSIS_DEVICEMODEL_H

#include "LMS/Graph/Device.h"

#include "mlir/IR/Operation.h"

namespace mlir {
namespace lms {

/// The device for `scope` (an op inside, or being, a module). `preset`, when
/// not empty, names a preset and wins over the DLTI spec. Emits an error at
/// `scope` and fails for an unknown preset or a malformed spec.
FailureOr<::lms::DeviceSpec> resolveDevice(Operation *scope,
                                           StringRef preset = "");

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_DEVICEMODEL_H
