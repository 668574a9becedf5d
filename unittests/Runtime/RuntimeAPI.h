//===- RuntimeAPI.h - The runtime's C ABI as the tests call it --*- C++ -*-===//

#ifndef LMS_UNITTESTS_RUNTIME_RUNTIMEAPI_H
#define LMS_UNITTESTS_RUNTIME_RUNTIMEAPI_H

#include "LMS/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventRecord(void *event, void *stream);
void mgpuEventSynchronize(void *event);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void lmsArenaAcquire(intptr_t arena, intptr_t offset, intptr_t bytes);
void lmsArenaRelease(intptr_t arena, intptr_t offset, intptr_t bytes);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void *mgpuModuleLoad(void *data, size_t size);
}

/// A field of the statistics JSON, read back from lmsRuntimeWriteStats.
inline uint64_t statField(const std::string &name) {
  std::string path = ::testing::TempDir() + "lms-runtime-stats.json";
  lmsRuntimeWriteStats(path.c_str());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string json = text.str();
  size_t at = json.find("\"" + name + "\": ");
  if (at == std::string::npos)
    return UINT64_MAX;
  return std::stoull(json.substr(at + name.size() + 4));
}

#endif // LMS_UNITTESTS_RUNTIME_RUNTIMEAPI_H
