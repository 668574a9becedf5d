func.func @chained(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
  %cst = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %a2 = linalg.exp ins(%a : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e2 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f3 : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e4 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %a2 : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<0.25> : tensor<4x1024xf32>
  %r = call @chained(%x) : (tensor<4x1024xf32>) -> tensor<1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>], iterator_types = ["reduction"]} ins(%r : tensor<1024xf32>) outs(%z : tensor<1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %u = tensor.cast %sum : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
