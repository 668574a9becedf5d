/*===- lms-embed-c.c - A C host of LMS, against the installed package -----===*\
|*                                                                            *|
|*   lms-embed-c input.mlir function budget                                  *|
|*                                                                            *|
|* Registers the upstream dialects and lms through the C API, parses the     *|
|* input, runs the LMS flow (strategy plan) for the budget, and prints the   *|
|* function's peak before and after and the module. Exits 1 when the flow    *|
|* fails, with the diagnostics on stderr.                                     *|
\*===----------------------------------------------------------------------===*/

#include "LMS-c/LMS.h"

#include "mlir-c/IR.h"
#include "mlir-c/RegisterEverything.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static void print(MlirStringRef text, void *file) {
  fwrite(text.data, 1, text.length, (FILE *)file);
}

static void error(MlirStringRef text, void *unused) {
  (void)unused;
  fprintf(stderr, "lms-embed-c: %.*s\n", (int)text.length, text.data);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s input.mlir function budget\n", argv[0]);
    return 2;
  }
  FILE *file = fopen(argv[1], "rb");
  if (!file) {
    fprintf(stderr, "lms-embed-c: cannot open %s\n", argv[1]);
    return 1;
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  size_t got = fread(text, 1, (size_t)size, file);
  text[got] = '\0';
  fclose(file);

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  lmsRegisterDialect(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  lmsRegisterPasses();

  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(text));
  free(text);
  if (mlirModuleIsNull(module))
    return 1;
  MlirStringRef function = mlirStringRefCreateFromCString(argv[2]);
  printf("// peak before: %" PRId64 "\n", lmsGetPeakBytes(module, function));

  LMSPipelineOptions options = {0};
  options.budget = argv[3];
  options.strategy = "plan";
  if (mlirLogicalResultIsFailure(
          lmsRunPipeline(module, &options, error, NULL))) {
    fprintf(stderr, "lms-embed-c: the LMS flow failed\n");
    return 1;
  }
  printf("// peak after: %" PRId64 "\n", lmsGetPeakBytes(module, function));
  mlirOperationPrint(mlirModuleGetOperation(module), print, stdout);
  printf("\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}
