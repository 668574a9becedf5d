// A program of bench/property/run.py (seed 5, program 24), input of
// arena-raise.test.
#id = affine_map<(d0) -> (d0)>
func.func private @helper1024(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %h = arith.constant 0.75 : f32
    %m = arith.mulf %i, %h : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
func.func @step(%x: tensor<1024xf32>) -> (tensor<256xf32>, tensor<1024xf32>) {
  %v2 = tensor.empty() : tensor<1024xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%v2 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v3 = tensor.empty() : tensor<256xf32>
  %z4 = arith.constant 0.0 : f32
  %v4 = linalg.fill ins(%z4 : f32) outs(%v3 : tensor<256xf32>) -> tensor<256xf32>
  %v5 = call @helper1024(%v1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v7 = tensor.empty() : tensor<256xf32>
  %v6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v4, %v4 : tensor<256xf32>, tensor<256xf32>) outs(%v7 : tensor<256xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %v8 = call @helper1024(%v1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v9 = call @helper1024(%v8) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v11 = tensor.empty() : tensor<1024xf32>
  %v10 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v8, %v8 : tensor<1024xf32>, tensor<1024xf32>) outs(%v11 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v12 = call @helper1024(%v9) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v13 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v12, %v12 : tensor<1024xf32>, tensor<1024xf32>) outs(%v8 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v15 = tensor.empty() : tensor<1024xf32>
  %v14 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v12, %v12 : tensor<1024xf32>, tensor<1024xf32>) outs(%v15 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v16 = arith.constant dense<0.25> : tensor<64xf32>
  %v18 = tensor.empty() : tensor<1024xf32>
  %v17 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v13 : tensor<1024xf32>) outs(%v18 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %r = arith.mulf %a0, %h : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v19 = call @helper1024(%v17) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v20 = tensor.empty() : tensor<256xf32>
  %z21 = arith.constant 0.0 : f32
  %v21 = linalg.fill ins(%z21 : f32) outs(%v20 : tensor<256xf32>) -> tensor<256xf32>
  %v23 = tensor.empty() : tensor<256xf32>
  %v22 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v21, %v6 : tensor<256xf32>, tensor<256xf32>) outs(%v23 : tensor<256xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %v25 = tensor.empty() : tensor<1024xf32>
  %v24 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v19 : tensor<1024xf32>) outs(%v25 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %r = arith.mulf %a0, %h : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v27 = tensor.empty() : tensor<256xf32>
  %v26 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v22 : tensor<256xf32>) outs(%v27 : tensor<256xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a0, %z : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %v28 = tensor.expand_shape %v24 [[0, 1]] output_shape [2, 512] : tensor<1024xf32> into tensor<2x512xf32>
  %v29 = tensor.collapse_shape %v28 [[0, 1]] : tensor<2x512xf32> into tensor<1024xf32>
  %v30 = tensor.empty() : tensor<1024xf32>
  %z31 = arith.constant 0.0 : f32
  %v31 = linalg.fill ins(%z31 : f32) outs(%v30 : tensor<1024xf32>) -> tensor<1024xf32>
  %v33 = tensor.empty() : tensor<1024xf32>
  %v32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v31 : tensor<1024xf32>) outs(%v33 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a0, %z : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v34 = tensor.empty() : tensor<256xf32>
  %z35 = arith.constant 0.0 : f32
  %v35 = linalg.fill ins(%z35 : f32) outs(%v34 : tensor<256xf32>) -> tensor<256xf32>
  %v36 = call @helper1024(%v29) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v37 = tensor.empty() : tensor<256xf32>
  %z38 = arith.constant 0.0 : f32
  %v38 = linalg.fill ins(%z38 : f32) outs(%v37 : tensor<256xf32>) -> tensor<256xf32>
  %v40 = tensor.empty() : tensor<1024xf32>
  %v39 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v24 : tensor<1024xf32>) outs(%v40 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %r = arith.mulf %a0, %h : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v42 = tensor.empty() : tensor<256xf32>
  %v41 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v35 : tensor<256xf32>) outs(%v42 : tensor<256xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a0, %z : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  return %v41, %v19 : tensor<256xf32>, tensor<1024xf32>
}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<1024xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c = arith.constant 11 : index
    %m = arith.remui %i, %c : index
    %n = arith.index_cast %m : index to i32
    %f = arith.sitofp %n : i32 to f32
    %s = arith.constant 0.125 : f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %r0, %r1 = call @step(%x) : (tensor<1024xf32>) -> (tensor<256xf32>, tensor<1024xf32>)
  %u0 = tensor.cast %r0 : tensor<256xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %r1 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}
