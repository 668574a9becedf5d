#id3 = affine_map<(c, h, w) -> (c, h, w)>
func.func @pool_step(%x: tensor<4x16x16xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.0e+38 : f32
  %minus1 = arith.constant -1 : i64
  %c2 = arith.constant 2 : index
  %c18 = arith.constant 18 : index
  // a = x * x + 1
  %ea = tensor.empty() : tensor<4x16x16xf32>
  %a = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x16x16xf32>) outs(%ea : tensor<4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    %one = arith.constant 1.0 : f32
    %s = arith.addf %m, %one : f32
    linalg.yield %s : f32
  } -> tensor<4x16x16xf32>
  %p = tensor.pad %a low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %ninf : f32
  } : tensor<4x16x16xf32> to tensor<4x18x18xf32>
  // Max pooling 3x3, stride 2, with the flat index of each maximum, as
  // torch exports write it: values and indices into two filled buffers.
  %ev = tensor.empty() : tensor<4x8x8xf32>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %ei = tensor.empty() : tensor<4x8x8xi64>
  %fi = linalg.fill ins(%minus1 : i64) outs(%ei : tensor<4x8x8xi64>) -> tensor<4x8x8xi64>
  %ew = tensor.empty() : tensor<3x3xf32>
  %fw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x3xf32>) -> tensor<3x3xf32>
  %pool:2 = linalg.generic {indexing_maps = [affine_map<(c, h, w, r, s) -> (c, h * 2 + r, w * 2 + s)>, affine_map<(c, h, w, r, s) -> (r, s)>, affine_map<(c, h, w, r, s) -> (c, h, w)>, affine_map<(c, h, w, r, s) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %fw : tensor<4x18x18xf32>, tensor<3x3xf32>) outs(%fv, %fi : tensor<4x8x8xf32>, tensor<4x8x8xi64>) {
  ^bb0(%in: f32, %win: f32, %best: f32, %bi: i64):
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %r = linalg.index 3 : index
    %s = linalg.index 4 : index
    %h2 = arith.muli %h, %c2 : index
    %row = arith.addi %h2, %r : index
    %w2 = arith.muli %w, %c2 : index
    %col = arith.addi %w2, %s : index
    %rowOff = arith.muli %row, %c18 : index
    %flat = arith.addi %rowOff, %col : index
    %flat64 = arith.index_cast %flat : index to i64
    %v = arith.addf %in, %win : f32
    %gt = arith.cmpf ogt, %v, %best : f32
    %nb = arith.select %gt, %v, %best : f32
    %ni = arith.select %gt, %flat64, %bi : i64
    linalg.yield %nb, %ni : f32, i64
  } -> (tensor<4x8x8xf32>, tensor<4x8x8xi64>)
  // A wide section while the pooled values and indices wait for their
  // second use: t1 and t2 are 16 KiB each.
  %e1 = tensor.empty() : tensor<4x32x32xf32>
  %t1 = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h floordiv 2, w floordiv 2)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x16x16xf32>) outs(%e1 : tensor<4x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4x32x32xf32>
  %e2 = tensor.empty() : tensor<4x32x32xf32>
  %t2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t1 : tensor<4x32x32xf32>) outs(%e2 : tensor<4x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %h = arith.mulf %in, %in : f32
    linalg.yield %h : f32
  } -> tensor<4x32x32xf32>
  %ez = tensor.empty() : tensor<1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<1xf32>) -> tensor<1xf32>
  %wide = linalg.generic {indexing_maps = [#id3, affine_map<(c, h, w) -> (0)>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%t2 : tensor<4x32x32xf32>) outs(%z : tensor<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  // The second use of the pooled values and indices (as a backward would).
  %ez2 = tensor.empty() : tensor<1xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%ez2 : tensor<1xf32>) -> tensor<1xf32>
  %late = linalg.generic {indexing_maps = [#id3, #id3, affine_map<(c, h, w) -> (c, h * 2, w * 2)>, affine_map<(c, h, w) -> (0)>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%pool#0, %pool#1, %x : tensor<4x8x8xf32>, tensor<4x8x8xi64>, tensor<4x16x16xf32>) outs(%z2 : tensor<1xf32>) {
  ^bb0(%v: f32, %i: i64, %xv: f32, %acc: f32):
    %fi2 = arith.sitofp %i : i64 to f32
    %t0 = arith.addf %v, %fi2 : f32
    %t = arith.addf %t0, %xv : f32
    %s = arith.addf %t, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %wide, %late : tensor<1xf32>, tensor<1xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %e = tensor.empty() : tensor<4x16x16xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<4x16x16xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 0 : index
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %hw = arith.muli %h, %w : index
    %chw = arith.addi %hw, %c : index
    %i = arith.index_cast %chw : index to i64
    %f = arith.uitofp %i : i64 to f32
    %sc = arith.constant 0.01 : f32
    %v = arith.mulf %f, %sc : f32
    %sn = math.sin %v : f32
    linalg.yield %sn : f32
  } -> tensor<4x16x16xf32>
  %r:2 = call @pool_step(%x) : (tensor<4x16x16xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  %u0 = tensor.cast %r#0 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %r#1 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}
