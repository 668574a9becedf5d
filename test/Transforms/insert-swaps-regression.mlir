// COM: Regression (found by the property test, seed 4): a reused host copy
// COM: made an out-of-place write into a view of the swapped tensor become
// COM: in place, keeping the device copy alive past the plan. Reuse is not
// COM: allowed after an op that writes into an alias of the tensor.
// RUN: lms-opt %s -allow-unregistered-dialect -lms-insert-swaps=budget=13532 | lms-opt -allow-unregistered-dialect -lms-report-memory=budget=13532 -o /dev/null | FileCheck %s
// CHECK: budget: {{.*}} (13532 bytes): fits

module {
  func.func @f(%arg0: tensor<64xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
    %0 = "test.op"(%arg0, %arg0, %arg0) {lms.cost = 146280 : i64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1024xf32>
    %1 = tensor.empty() : tensor<1024xf32>
    %2 = linalg.exp ins(%0 : tensor<1024xf32>) outs(%1 : tensor<1024xf32>) -> tensor<1024xf32>
    %3 = linalg.exp ins(%2 : tensor<1024xf32>) outs(%1 : tensor<1024xf32>) -> tensor<1024xf32>
    %extracted_slice = tensor.extract_slice %3[0] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %4 = "test.op"(%2, %extracted_slice, %extracted_slice) {lms.cost = 857093 : i64} : (tensor<1024xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<256xf32>
    %5:2 = "test.op"(%0) {lms.cost = 766959 : i64} : (tensor<1024xf32>) -> (tensor<1024xf32>, tensor<16xf32>)
    %6:2 = "test.op"(%4, %5#0) {lms.cost = 799468 : i64} : (tensor<256xf32>, tensor<1024xf32>) -> (tensor<16xf32>, tensor<64xf32>)
    %7 = "test.op"(%3, %5#1, %6#1) {lms.cost = 285989 : i64} : (tensor<1024xf32>, tensor<16xf32>, tensor<64xf32>) -> tensor<256xf32>
    %8 = linalg.exp ins(%7 : tensor<256xf32>) outs(%4 : tensor<256xf32>) -> tensor<256xf32>
    %extracted_slice_0 = tensor.extract_slice %2[0] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %9:2 = "test.op"(%extracted_slice_0) {lms.cost = 720529 : i64} : (tensor<512xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    %10 = linalg.exp ins(%extracted_slice_0 : tensor<512xf32>) outs(%extracted_slice : tensor<512xf32>) -> tensor<512xf32>
    %11 = "test.op"(%10, %9#0, %10) {lms.cost = 993020 : i64} : (tensor<512xf32>, tensor<64xf32>, tensor<512xf32>) -> tensor<64xf32>
    %12 = linalg.exp ins(%10 : tensor<512xf32>) outs(%extracted_slice_0 : tensor<512xf32>) -> tensor<512xf32>
    %13 = "test.op"(%12, %0) {lms.cost = 625254 : i64} : (tensor<512xf32>, tensor<1024xf32>) -> tensor<256xf32>
    %14 = "test.op"(%12, %11, %12) {lms.cost = 535071 : i64} : (tensor<512xf32>, tensor<64xf32>, tensor<512xf32>) -> tensor<64xf32>
    %15 = linalg.exp ins(%14 : tensor<64xf32>) outs(%6#1 : tensor<64xf32>) -> tensor<64xf32>
    %16 = "test.op"(%15) {lms.cost = 299828 : i64} : (tensor<64xf32>) -> tensor<64xf32>
    %17:2 = "test.op"(%10, %14) {lms.cost = 961750 : i64} : (tensor<512xf32>, tensor<64xf32>) -> (tensor<256xf32>, tensor<1024xf32>)
    %extracted_slice_1 = tensor.extract_slice %17#1[0] [512] [1] : tensor<1024xf32> to tensor<512xf32>
    %18:2 = "test.op"(%17#0, %9#0) {lms.cost = 83072 : i64} : (tensor<256xf32>, tensor<64xf32>) -> (tensor<16xf32>, tensor<256xf32>)
    %19 = "test.op"(%0, %18#1, %extracted_slice_1) {lms.cost = 750186 : i64} : (tensor<1024xf32>, tensor<256xf32>, tensor<512xf32>) -> tensor<64xf32>
    %20 = "test.op"(%18#0) {lms.cost = 197361 : i64} : (tensor<16xf32>) -> tensor<256xf32>
    %21 = "test.op"(%20, %18#1, %7) {lms.cost = 808079 : i64} : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1024xf32>
    %22:2 = "test.op"(%21) {lms.cost = 119710 : i64} : (tensor<1024xf32>) -> (tensor<1024xf32>, tensor<256xf32>)
    %23:2 = "test.op"(%22#0, %22#1) {lms.cost = 326376 : i64} : (tensor<1024xf32>, tensor<256xf32>) -> (tensor<1024xf32>, tensor<256xf32>)
    %24 = linalg.exp ins(%23#1 : tensor<256xf32>) outs(%17#0 : tensor<256xf32>) -> tensor<256xf32>
    %25:2 = "test.op"(%2) {lms.cost = 525141 : i64} : (tensor<1024xf32>) -> (tensor<64xf32>, tensor<256xf32>)
    return %25#1, %13 : tensor<256xf32>, tensor<256xf32>
  }
}
