//===- DeviceModel.cpp - The device a program is planned for --------------===//

#include "LMS/Analysis/DeviceModel.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::lms;

static std::optional<double> asNumber(Attribute attr) {
  if (auto f = dyn_cast_or_null<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
    return static_cast<double>(i.getValue().getSExtValue());
  return std::nullopt;
}

FailureOr<::lms::DeviceSpec> mlir::lms::resolveDevice(Operation *scope,
                                                      StringRef preset) {
  auto lookup = [&](StringRef name,
                    Location loc) -> FailureOr<::lms::DeviceSpec> {
    if (std::optional<::lms::DeviceSpec> spec = ::lms::lookupDevicePreset(name))
      return *spec;
    emitError(loc) << "unknown device preset '" << name
                   << "'; known presets: " << ::lms::listDevicePresets();
    return failure();
  };
  if (!preset.empty())
    return lookup(preset, scope->getLoc());

  auto module = dyn_cast<ModuleOp>(scope);
  if (!module)
    module = scope->getParentOfType<ModuleOp>();
  auto system = module ? module->getAttrOfType<TargetSystemSpecInterface>(
                             DLTIDialect::kTargetSystemDescAttrName)
                       : TargetSystemSpecInterface();
  if (system) {
    for (DataLayoutEntryInterface device : system.getEntries()) {
      auto spec = dyn_cast<TargetDeviceSpecInterface>(device.getValue());
      if (!spec)
        continue;
      bool hasLMSKeys = llvm::any_of(spec.getEntries(), [](auto entry) {
        auto key = dyn_cast<StringAttr>(entry.getKey());
        return key && key.getValue().starts_with("lms.");
      });
      if (!hasLMSKeys)
        continue;
      Location loc = module.getLoc();
      ::lms::DeviceSpec result;
      StringRef base = ::lms::getDefaultDevicePreset();
      for (DataLayoutEntryInterface entry : spec.getEntries()) {
        auto key = dyn_cast<StringAttr>(entry.getKey());
        if (key && key.getValue() == "lms.preset") {
          auto name = dyn_cast<StringAttr>(entry.getValue());
          if (!name) {
            emitError(loc) << "'lms.preset' in the DLTI target spec must be a "
                              "string";
            return failure();
          }
          base = name.getValue();
        }
      }
      FailureOr<::lms::DeviceSpec> baseSpec = lookup(base, loc);
      if (failed(baseSpec))
        return failure();
      result = *baseSpec;
      for (DataLayoutEntryInterface entry : spec.getEntries()) {
        auto key = dyn_cast<StringAttr>(entry.getKey());
        if (!key || !key.getValue().starts_with("lms.") ||
            key.getValue() == "lms.preset")
          continue;
        std::optional<double> value = asNumber(entry.getValue());
        double *field =
            llvm::StringSwitch<double *>(key.getValue())
                .Case("lms.peak_flops", &result.peakFlops)
                .Case("lms.memory_bandwidth", &result.memoryBandwidth)
                .Case("lms.h2d_bandwidth", &result.h2dBandwidth)
                .Case("lms.d2h_bandwidth", &result.d2hBandwidth)
                .Case("lms.op_overhead", &result.opOverhead)
                .Case("lms.copy_latency", &result.copyLatency)
                .Default(nullptr);
        bool isCapacity = key.getValue() == "lms.capacity_bytes";
        if (!field && !isCapacity) {
          emitError(loc) << "unknown key '" << key.getValue()
                         << "' in the DLTI target spec; known: lms.preset, "
                            "lms.capacity_bytes, lms.peak_flops, "
                            "lms.memory_bandwidth, lms.h2d_bandwidth, "
                            "lms.d2h_bandwidth, lms.op_overhead, "
                            "lms.copy_latency";
          return failure();
        }
        if (!value || *value < 0) {
          emitError(loc) << "'" << key.getValue()
                         << "' in the DLTI target spec must be a "
                            "non-negative number";
          return failure();
        }
        if (isCapacity) {
          result.capacityBytes = static_cast<uint64_t>(*value);
          // The base preset's card no longer describes it.
          result.physicalBytes = 0;
        } else {
          *field = *value;
        }
      }
      result.name = (base + " (DLTI)").str();
      return result;
    }
  }
  return lookup(::lms::getDefaultDevicePreset(), scope->getLoc());
}
