// COM: lms-gpu-pipeline maps compute to NVVM kernels (PTX for sm_90, no GPU
// COM: needed to compile) and leaves no lms op and no GPU data op unlowered:
// COM: only the kernel launches and binaries, which translation turns into
// COM: runtime calls.
// RUN: %python %gen_models/mlp_train.py --batch 8 --inputs 8 --width 16 --layers 2 --classes 4 -o %t.mlir
// RUN: lms-opt %t.mlir --lms-gpu-pipeline="budget=70% arena=false" -o %t.gpu.mlir
// RUN: FileCheck %s < %t.gpu.mlir
// CHECK-NOT: lms.
// CHECK-NOT: gpu.alloc
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: gpu.wait
// CHECK-NOT: gpu.dealloc
// CHECK: llvm.call @mgpuMemcpy
// CHECK: gpu.launch_func
// COM: Kernels that read a swapped-in buffer are ordered after its copy on
// COM: the device: launched on the copy's stream.
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @
// CHECK: gpu.binary @{{.*}} [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// COM: The same input gives the same output: the compile times that the
// COM: NVVM serializer records in the objects' properties are dropped, and a
// COM: second run is identical.
// CHECK-NOT: TimeInMs
// RUN: lms-opt %t.mlir --lms-gpu-pipeline="budget=70% arena=false" -o %t.gpu2.mlir
// RUN: cmp %t.gpu.mlir %t.gpu2.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.gpu.mlir | FileCheck %s --check-prefix=LLVM
// LLVM: call {{.*}}@mgpuLaunchKernel

// COM: The host pipeline leaves nothing of the GPU dialect either.
// RUN: lms-opt %t.mlir --lms-host-pipeline="budget=70% arena=false" | FileCheck %s --check-prefix=HOST
// HOST-NOT: lms.
// HOST-NOT: gpu.
// HOST: llvm.call @mgpuMemcpy
