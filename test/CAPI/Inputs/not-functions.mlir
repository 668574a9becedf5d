// Symbols lmsGetPeakBytes cannot analyse.
func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
memref.global "private" @g : memref<4xf32>
