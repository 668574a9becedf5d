/* printMemrefF32 for an AOT-compiled LMS program (what libmlir_runner_utils
   prints, for compare_outputs.py: a base@ line, then the numbers). */
#include <stdint.h>
#include <stdio.h>
void printMemrefF32(int64_t rank, void *descriptor) {
  float **ptrs = (float **)descriptor;
  int64_t *rest = (int64_t *)(ptrs + 2);
  int64_t offset = rest[0];
  int64_t *sizes = rest + 1, *strides = rest + 1 + rank;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= sizes[d];
  printf("Unranked Memref base@ = %p rank = %lld data = \n[", (void *)ptrs[1],
         (long long)rank);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = i, at = offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      at += (rem % sizes[d]) * strides[d];
      rem /= sizes[d];
    }
    printf(i ? ",  %g" : "%g", ptrs[1][at]);
  }
  printf("]\n");
}
void lms_main(void);
int main(void) {
  lms_main();
  return 0;
}
