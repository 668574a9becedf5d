//===- Device.cpp - Device descriptions and op timing ---------------------===//
//
// Presets: vendor datasheet FP32 (non-tensor-core) throughput and HBM
// bandwidth; what a process can allocate; and host links at the rates
// pinned copies reach, not the line rates. docs/UserGuide.md ("Devices")
// gives each figure's source.
//
// Usable memory: the total the driver reports (nvidia-smi's "Total",
// cudaMemGetInfo) less 1 GiB for the CUDA context and the libraries'
// workspaces (cuBLAS, cuDNN), which a framework process holds before its
// first tensor. The datasheet size stays as physicalBytes.
//
// Links, a direction: PCIe Gen3 x16 15.75 GB/s line rate, 12 GB/s pinned
// (bandwidthTest on V100 systems reports 12-13); Gen4 x16 25 GB/s pinned
// (31.5 line); Gen5 x16 50 GB/s pinned (63 line); NVLink 2.0 between a
// POWER9 CPU and a V100 in the 4-GPU AC922: 3 links of 25 GB/s a direction
// (the quoted 150 GB/s counts both), 68 GB/s taken as what copies reach
// (90%); GH200 NVLink-C2C measured ~375 GB/s host-to-device and ~297 GB/s
// device-to-host.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Device.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace lms;

static constexpr double GB = 1e9;
static constexpr uint64_t GiB = 1ull << 30;
static constexpr uint64_t MiB = 1ull << 20;
static constexpr uint64_t HostGB = 1000ull * 1000 * 1000;
/// The CUDA context and library workspaces.
static constexpr uint64_t Reserve = 1 * GiB;

// Host memory per GPU: the reference system's memory over its GPUs (DGX-1:
// 512 GB for 8 V100; IBM AC922, the TFLMS machine: 512 GB for 4 V100 over
// NVLink; DGX A100: 1 TB for 8; a 2-socket PCIe server: 512 GB for 4 H100;
// DGX H200: 2 TB for 8; GH200: 480 GB of LPDDR5X next to each GPU).
// Driver totals (MiB): V100 16 GB 16160, V100 32 GB 32510, A100 40 GB
// 40536, H100 PCIe 81559, H200 143771 (its datasheet says 141 GB: taken
// as GiB, below the driver total), GH200 (96 GB HBM3) 97871.
static const DeviceSpec kPresets[] = {
    // name, usable, FLOP/s, HBM B/s, H2D B/s, D2H B/s, op overhead, copy
    // latency, host memory, datasheet memory.
    {"v100-16g", 16160 * MiB - Reserve, 15.7e12, 900 * GB, 12 * GB, 12 * GB,
     5e-6, 1e-5, 64 * HostGB, 16 * GiB},
    {"v100-32g-nvlink", 32510 * MiB - Reserve, 15.7e12, 900 * GB, 68 * GB,
     68 * GB, 5e-6, 1e-5, 128 * HostGB, 32 * GiB},
    {"a100-40g", 40536 * MiB - Reserve, 19.5e12, 1555 * GB, 25 * GB, 25 * GB,
     4e-6, 1e-5, 128 * HostGB, 40 * GiB},
    {"h100-pcie", 81559 * MiB - Reserve, 51.2e12, 2000 * GB, 50 * GB, 50 * GB,
     3e-6, 1e-5, 128 * HostGB, 80 * GiB},
    {"h200", 143771 * MiB - Reserve, 67e12, 4800 * GB, 50 * GB, 50 * GB, 3e-6,
     1e-5, 256 * HostGB, 141 * GiB},
    {"gh200", 97871 * MiB - Reserve, 67e12, 4000 * GB, 375 * GB, 297 * GB, 3e-6,
     5e-6, 480 * HostGB, 96 * GiB},
};

double DeviceSpec::computeSeconds(const OpCost &cost) const {
  if (cost.seconds)
    return *cost.seconds;
  auto roofline = [&](double flops, double bytes) {
    double compute = peakFlops > 0 ? flops / peakFlops : 0;
    double memory = memoryBandwidth > 0 ? bytes / memoryBandwidth : 0;
    return std::max(compute, memory) + opOverhead;
  };
  double upload =
      cost.h2dBytes > 0 ? h2dSeconds(static_cast<uint64_t>(cost.h2dBytes)) : 0;
  if (cost.kernels.empty())
    return roofline(cost.flops, cost.bytes) + upload;
  double seconds = upload;
  for (const Kernel &k : cost.kernels) {
    double copies =
        (k.h2dBytes > 0 ? h2dSeconds(static_cast<uint64_t>(k.h2dBytes)) : 0) +
        (k.d2hBytes > 0 ? d2hSeconds(static_cast<uint64_t>(k.d2hBytes)) : 0);
    // A copy alone launches no kernel.
    bool copyOnly = copies > 0 && k.flops == 0 && k.bytes == 0 && !k.seconds;
    double kernel = copyOnly    ? 0
                    : k.seconds ? *k.seconds
                                : roofline(k.flops, k.bytes);
    seconds += k.launches * (kernel + copies);
  }
  return seconds;
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
