  // Driver for IREE's MNIST training step (appended inside its module by
  // the test): deterministic images and labels, two steps (the second sees
  // the weights the first stored in the globals), the loss of each printed.
  func.func private @printMemrefF32(tensor<*xf32>)
  func.func @main() {
    %ie = tensor.empty() : tensor<32x28x28x1xf32>
    %images = linalg.generic {indexing_maps = [affine_map<(b, i, j, c) -> (b, i, j, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ie : tensor<32x28x28x1xf32>) {
    ^bb0(%o: f32):
      %b = linalg.index 0 : index
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %s0 = arith.muli %b, %i : index
      %s1 = arith.addi %s0, %j : index
      %c7 = arith.constant 7 : index
      %m = arith.remui %s1, %c7 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %c100 = arith.constant 100.0 : f32
      %v = arith.divf %mf, %c100 : f32
      linalg.yield %v : f32
    } -> tensor<32x28x28x1xf32>
    %le = tensor.empty() : tensor<32xi32>
    %labels = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>], iterator_types = ["parallel"]} outs(%le : tensor<32xi32>) {
    ^bb0(%o: i32):
      %b = linalg.index 0 : index
      %c10 = arith.constant 10 : index
      %m = arith.remui %b, %c10 : index
      %mi = arith.index_cast %m : index to i32
      linalg.yield %mi : i32
    } -> tensor<32xi32>
    %loss0 = call @learn(%images, %labels) : (tensor<32x28x28x1xf32>, tensor<32xi32>) -> tensor<f32>
    %u0 = tensor.cast %loss0 : tensor<f32> to tensor<*xf32>
    call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
    %loss1 = call @learn(%images, %labels) : (tensor<32x28x28x1xf32>, tensor<32xi32>) -> tensor<f32>
    %u1 = tensor.cast %loss1 : tensor<f32> to tensor<*xf32>
    call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
    return
  }
}
