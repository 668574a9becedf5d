//===- Device.cpp - Device descriptions and op timing ---------------------===//
//
// Presets. Figures are vendor datasheet numbers for FP32 (non-tensor-core)
// throughput and HBM bandwidth, and the host links of DESIGN.md section 4:
// PCIe Gen3 x16 ~16 GB/s a direction, Gen4 ~32, Gen5 ~63; NVLink 2.0 between
// a POWER9 CPU and a V100 150 GB/s a direction; GH200 NVLink-C2C measured
// ~375 GB/s host-to-device and ~297 GB/s device-to-host.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Device.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace lms;

static constexpr double GB = 1e9;
static constexpr uint64_t GiB = 1ull << 30;
static constexpr uint64_t HostGB = 1000ull * 1000 * 1000;

// Host memory per GPU: the reference system's memory over its GPUs (DGX-1:
// 512 GB for 8 V100; IBM AC922, the TFLMS machine: 512 GB for 4 V100 over
// NVLink; DGX A100: 1 TB for 8; a 2-socket PCIe server: 512 GB for 4 H100;
// DGX H200: 2 TB for 8; GH200: 480 GB of LPDDR5X next to each GPU).
static const DeviceSpec kPresets[] = {
    // name, capacity, FLOP/s, HBM B/s, H2D B/s, D2H B/s, op overhead, copy
    // latency, host memory.
    {"v100-16g", 16 * GiB, 15.7e12, 900 * GB, 16 * GB, 16 * GB, 5e-6, 1e-5,
     64 * HostGB},
    {"v100-32g-nvlink", 32 * GiB, 15.7e12, 900 * GB, 150 * GB, 150 * GB, 5e-6,
     1e-5, 128 * HostGB},
    {"a100-40g", 40 * GiB, 19.5e12, 1555 * GB, 32 * GB, 32 * GB, 4e-6, 1e-5,
     128 * HostGB},
    {"h100-pcie", 80 * GiB, 51.2e12, 2000 * GB, 63 * GB, 63 * GB, 3e-6, 1e-5,
     128 * HostGB},
    {"h200", 141ull * 1000 * 1000 * 1000, 67e12, 4800 * GB, 63 * GB, 63 * GB,
     3e-6, 1e-5, 256 * HostGB},
    {"gh200", 96 * GiB, 67e12, 4000 * GB, 375 * GB, 297 * GB, 3e-6, 5e-6,
     480 * HostGB},
};

double DeviceSpec::computeSeconds(const OpCost &cost) const {
  if (cost.seconds)
    return *cost.seconds;
  double compute = peakFlops > 0 ? cost.flops / peakFlops : 0;
  double memory = memoryBandwidth > 0 ? cost.bytes / memoryBandwidth : 0;
  double upload =
      cost.h2dBytes > 0 ? h2dSeconds(static_cast<uint64_t>(cost.h2dBytes)) : 0;
  return std::max(compute, memory) + upload + opOverhead;
}

double DeviceSpec::d2hSeconds(uint64_t bytes) const {
  return copyLatency + (d2hBandwidth > 0 ? bytes / d2hBandwidth : 0);
}

double DeviceSpec::h2dSeconds(uint64_t bytes) const {
  return copyLatency + (h2dBandwidth > 0 ? bytes / h2dBandwidth : 0);
}

llvm::ArrayRef<DeviceSpec> lms::getDevicePresets() { return kPresets; }

std::optional<DeviceSpec> lms::lookupDevicePreset(llvm::StringRef name) {
  for (const DeviceSpec &spec : kPresets)
    if (spec.name == name)
      return spec;
  return std::nullopt;
}

std::string lms::listDevicePresets() {
  std::string names;
  for (const DeviceSpec &spec : kPresets) {
    if (!names.empty())
      names += ", ";
    names += spec.name;
  }
  return names;
}

llvm::StringRef lms::getDefaultDevicePreset() { return "v100-16g"; }
