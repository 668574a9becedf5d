// RUN: lms-opt %s -split-input-file --lms-report-memory -o /dev/null | FileCheck %s

// COM: Regression (property program 235, seed 14, a loop --lms-split made):
// COM: in a loop body, a reshape of a slice of a tensor of the enclosing
// COM: function is a view of that tensor and allocates nothing; the analysis
// COM: took the reshape (a view of a view) for a new buffer (analysed 16,896
// COM: vs measured 16,384). Here: %a, %b and the result (4 KiB each) plus the
// COM: body's one 2 KiB buffer = 14 KiB.
// CHECK: @slice_views: peak 14.0 KiB (14336 bytes) at op 4 'scf.for'
func.func @slice_views(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c512 = arith.constant 512 : index
  %init = tensor.empty() : tensor<1024xf32>
  %r = scf.for %i = %c0 to %c1024 step %c512 iter_args(%acc = %init) -> (tensor<1024xf32>) {
    %s = tensor.extract_slice %a[%i] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %e = tensor.expand_shape %s [[0, 1]] output_shape [1, 512] : tensor<512xf32> into tensor<1x512xf32>
    %k = tensor.collapse_shape %e [[0, 1]] : tensor<1x512xf32> into tensor<512xf32>
    %t = tensor.empty() : tensor<512xf32>
    %s2 = tensor.extract_slice %b[%i] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %m = linalg.mul ins(%s2, %k : tensor<512xf32>, tensor<512xf32>) outs(%t : tensor<512xf32>) -> tensor<512xf32>
    %u = tensor.insert_slice %m into %acc[%i] [512] [1] : tensor<512xf32> into tensor<1024xf32>
    scf.yield %u : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

// -----

// COM: Regression (property program 6186, seed 40, a loop --lms-split made):
// COM: a result written in place into a slice of a tensor of the enclosing
// COM: function (%w into %a's slice) is a buffer of that function too, and a
// COM: reshape of it allocates nothing; the analysis took the reshape for a
// COM: new 2 KiB buffer (analysed 26,624 vs measured 24,576). Here: %a, %b
// COM: and the result, 4 KiB each, and nothing more in the loop.
// CHECK: @view_of_in_place_result: peak 12.0 KiB (12288 bytes)
func.func @view_of_in_place_result(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c512 = arith.constant 512 : index
  %init = tensor.empty() : tensor<1024xf32>
  %r = scf.for %i = %c0 to %c1024 step %c512 iter_args(%acc = %init) -> (tensor<1024xf32>) {
    %s = tensor.extract_slice %b[%i] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %d = tensor.extract_slice %a[%i] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %w = linalg.exp ins(%s : tensor<512xf32>) outs(%d : tensor<512xf32>) -> tensor<512xf32>
    %e = tensor.expand_shape %w [[0, 1]] output_shape [1, 512] : tensor<512xf32> into tensor<1x512xf32>
    %k = tensor.collapse_shape %e [[0, 1]] : tensor<1x512xf32> into tensor<512xf32>
    %u = tensor.insert_slice %k into %acc[%i] [512] [1] : tensor<512xf32> into tensor<1024xf32>
    scf.yield %u : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}
