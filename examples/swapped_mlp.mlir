// A two-layer MLP forward and backward step on tensors, after LMS planning by
// hand: the first layer's activation is offloaded to host memory while the
// second layer runs, and brought back for the backward pass; the ReLU output
// is recomputed instead of kept.
//
//   lms-opt examples/swapped_mlp.mlir               # parse, verify, print
//   lms-opt examples/swapped_mlp.mlir --lms-strip   # the program before LMS

func.func @mlp_step(%x: tensor<64x256xf32>, %w1: tensor<256x512xf32>,
                    %w2: tensor<512x10xf32>, %dy: tensor<64x10xf32>)
    -> (tensor<64x10xf32>, tensor<256x512xf32>, tensor<512x10xf32>) {
  %zero = arith.constant 0.0 : f32
  // Forward.
  %e1 = tensor.empty() : tensor<64x512xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %h1 = linalg.matmul ins(%x, %w1 : tensor<64x256xf32>, tensor<256x512xf32>)
                      outs(%f1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %a1 = linalg.max ins(%h1, %f1 : tensor<64x512xf32>, tensor<64x512xf32>)
                   outs(%e1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  // Offload the input while the second layer computes.
  %xh = lms.swap_out %x : tensor<64x256xf32> -> !lms.host<tensor<64x256xf32>>
  %e2 = tensor.empty() : tensor<64x10xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x10xf32>
  %y = linalg.matmul ins(%a1, %w2 : tensor<64x512xf32>, tensor<512x10xf32>)
                     outs(%z2 : tensor<64x10xf32>) -> tensor<64x10xf32>
  lms.swap_wait %xh : !lms.host<tensor<64x256xf32>>
  // Backward: dW2 = a1^T dy, da1 = dy W2^T, dW1 = x^T (da1 * relu'(h1)).
  %ew2 = tensor.empty() : tensor<512x10xf32>
  %zw2 = linalg.fill ins(%zero : f32) outs(%ew2 : tensor<512x10xf32>) -> tensor<512x10xf32>
  %dw2 = linalg.matmul
           indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                            affine_map<(m, n, k) -> (k, n)>,
                            affine_map<(m, n, k) -> (m, n)>]
           ins(%a1, %dy : tensor<64x512xf32>, tensor<64x10xf32>)
           outs(%zw2 : tensor<512x10xf32>) -> tensor<512x10xf32>
  %da1 = linalg.matmul
           indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                            affine_map<(m, n, k) -> (n, k)>,
                            affine_map<(m, n, k) -> (m, n)>]
           ins(%dy, %w2 : tensor<64x10xf32>, tensor<512x10xf32>)
           outs(%f1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  // The ReLU mask is recomputed from the pre-activation.
  %mask = lms.recompute (%h1) : (tensor<64x512xf32>) -> tensor<64x512xf32> {
  ^bb0(%pre: tensor<64x512xf32>):
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %em = tensor.empty() : tensor<64x512xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
         ins(%pre : tensor<64x512xf32>) outs(%em : tensor<64x512xf32>) {
    ^bb0(%v: f32, %o: f32):
      %gt = arith.cmpf ogt, %v, %c0 : f32
      %s = arith.select %gt, %c1, %c0 : f32
      linalg.yield %s : f32
    } -> tensor<64x512xf32>
    lms.yield %m : tensor<64x512xf32>
  }
  %dh1 = linalg.mul ins(%da1, %mask : tensor<64x512xf32>, tensor<64x512xf32>)
                    outs(%e1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %xd = lms.swap_in %xh : !lms.host<tensor<64x256xf32>> -> tensor<64x256xf32>
  %ew1 = tensor.empty() : tensor<256x512xf32>
  %zw1 = linalg.fill ins(%zero : f32) outs(%ew1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dw1 = linalg.matmul
           indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                            affine_map<(m, n, k) -> (k, n)>,
                            affine_map<(m, n, k) -> (m, n)>]
           ins(%xd, %dh1 : tensor<64x256xf32>, tensor<64x512xf32>)
           outs(%zw1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %y, %dw1, %dw2 : tensor<64x10xf32>, tensor<256x512xf32>, tensor<512x10xf32>
}
