// RUN: lms-opt %s --lms-split=slices=2 | FileCheck %s
// RUN: not lms-opt %s --lms-plan --lms-budget=300B -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN

// COM: Regression (found by bench/fuzz/mutate.py --server): an op with a
// COM: loop of extent 0 (here the matmul's reduction over an empty
// COM: dimension) crashed the splitter inside upstream's linalg tiling, which
// COM: takes a tile size of 0 for "not tiled" and then reads loop bounds it
// COM: was not given. Such an op is not split; the rest still is, and
// COM: planning below the floor is a clean error.
// CHECK-LABEL: func.func @zero_k
// CHECK:       %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x0xf32>, tensor<0x8xf32>)
// CHECK:       scf.for
// CHECK:         tensor.extract_slice %[[MM]]
// CHECK:         linalg.exp {{.*}} -> tensor<4x8xf32>
// PLAN: error: budget 300 B (300 bytes) is below the smallest feasible budget 512 B
func.func @zero_k(%a: tensor<8x0xf32>, %b: tensor<0x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x0xf32>, tensor<0x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %x = linalg.exp ins(%r : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %x : tensor<8x8xf32>
}
