// The input of test/Integration/remat-view-twice.mlir (see there).
func.func @view_between_recomputes(%x: tensor<4x1024xf32>, %y: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1x1024xf32>, tensor<1x1024xf32>) {
  %cst = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %u0 = linalg.add ins(%a, %y : tensor<1024xf32>, tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e2 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e3 = tensor.empty() : tensor<4x1024xf32>
  %b2 = linalg.exp ins(%b : tensor<4x1024xf32>) outs(%e3 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %bs = tensor.extract_slice %b2[0, 0] [1, 1024] [1, 1] : tensor<4x1024xf32> to tensor<1x1024xf32>
  %av = tensor.expand_shape %a [[0, 1]] output_shape [1, 1024] : tensor<1024xf32> into tensor<1x1024xf32>
  %e4 = tensor.empty() : tensor<1x1024xf32>
  %u1 = linalg.add ins(%av, %bs : tensor<1x1024xf32>, tensor<1x1024xf32>) outs(%e4 : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %e5 = tensor.empty() : tensor<4x1024xf32>
  %c = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e5 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e6 = tensor.empty() : tensor<4x1024xf32>
  %c2 = linalg.exp ins(%c : tensor<4x1024xf32>) outs(%e6 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %cs1 = tensor.extract_slice %c[0, 0] [3, 1024] [1, 1] : tensor<4x1024xf32> to tensor<3x1024xf32>
  %cs2 = tensor.extract_slice %c2[0, 0] [3, 1024] [1, 1] : tensor<4x1024xf32> to tensor<3x1024xf32>
  %e7 = tensor.empty() : tensor<3x1024xf32>
  %c3 = linalg.add ins(%cs1, %cs2 : tensor<3x1024xf32>, tensor<3x1024xf32>) outs(%e7 : tensor<3x1024xf32>) -> tensor<3x1024xf32>
  %cs = tensor.extract_slice %c3[0, 0] [1, 1024] [1, 1] : tensor<3x1024xf32> to tensor<1x1024xf32>
  %e8 = tensor.empty() : tensor<1x1024xf32>
  %u2 = linalg.add ins(%av, %cs : tensor<1x1024xf32>, tensor<1x1024xf32>) outs(%e8 : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  return %u0, %u1, %u2 : tensor<1024xf32>, tensor<1x1024xf32>, tensor<1x1024xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %ex = tensor.empty() : tensor<4x1024xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%ex : tensor<4x1024xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ij = arith.muli %i, %j : index
    %k = arith.addi %ij, %j : index
    %k64 = arith.index_cast %k : index to i64
    %f = arith.uitofp %k64 : i64 to f32
    %sc = arith.constant 0.001 : f32
    %v = arith.mulf %f, %sc : f32
    %sn = math.sin %v : f32
    linalg.yield %sn : f32
  } -> tensor<4x1024xf32>
  %ey = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>], iterator_types = ["parallel"]} outs(%ey : tensor<1024xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 0 : index
    %j64 = arith.index_cast %j : index to i64
    %f = arith.uitofp %j64 : i64 to f32
    %sc = arith.constant 0.01 : f32
    %v = arith.mulf %f, %sc : f32
    %cs = math.cos %v : f32
    linalg.yield %cs : f32
  } -> tensor<1024xf32>
  %r:3 = call @view_between_recomputes(%x, %y) : (tensor<4x1024xf32>, tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1x1024xf32>, tensor<1x1024xf32>)
  %p0 = tensor.cast %r#0 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%p0) : (tensor<*xf32>) -> ()
  %p1 = tensor.cast %r#1 : tensor<1x1024xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  %p2 = tensor.cast %r#2 : tensor<1x1024xf32> to tensor<*xf32>
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  return
}
