/*===- lms-capi-test.c - Drives LMS through its C API ---------------------===*\
|*                                                                            *|
|* Usage: lms-capi-test FILE FUNC MAX-PEAK-BYTES MODE ARGS...                 *|
|*   MODE text PIPELINE                 lmsRunPassPipeline(PIPELINE)          *|
|*   MODE flow BUDGET STRATEGY LOWER    lmsRunPipeline with those options     *|
|* Parses FILE with every upstream dialect and lms registered, prints the     *|
|* peak of @FUNC before and after (unless lowered), fails when the peak after *|
|* exceeds MAX-PEAK-BYTES, and prints the module. Pure C: it is what a host   *|
|* written against MLIR's C API does.                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "LMS-c/LMS.h"

#include "mlir-c/IR.h"
#include "mlir-c/RegisterEverything.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToFile(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

static void printError(MlirStringRef text, void *userData) {
  (void)userData;
  fprintf(stderr, "error: %.*s\n", (int)text.length, text.data);
}

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *buffer = malloc((size_t)size + 1);
  if (buffer && fread(buffer, 1, (size_t)size, file) != (size_t)size) {
    free(buffer);
    buffer = NULL;
  }
  if (buffer)
    buffer[size] = '\0';
  fclose(file);
  return buffer;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr,
            "usage: %s FILE FUNC MAX-PEAK-BYTES (text PIPELINE | "
            "flow BUDGET STRATEGY LOWER)\n",
            argv[0]);
    return 2;
  }
  const char *path = argv[1], *func = argv[2], *mode = argv[4];
  int64_t maxPeak = strtoll(argv[3], NULL, 10);

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  lmsRegisterDialect(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  lmsRegisterPasses();

  MlirStringRef ns =
      mlirDialectHandleGetNamespace(mlirGetDialectHandle__lms__());
  printf("dialect: %.*s\n", (int)ns.length, ns.data);

  char *source = readFile(path);
  if (!source) {
    fprintf(stderr, "error: cannot read %s\n", path);
    return 1;
  }
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(source));
  free(source);
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "error: %s does not parse\n", path);
    return 1;
  }

  MlirStringRef funcName = mlirStringRefCreateFromCString(func);
  int64_t before = lmsGetPeakBytes(module, funcName);
  printf("peak before: %" PRId64 "\n", before);

  MlirLogicalResult result;
  int lowered = 0;
  if (strcmp(mode, "text") == 0) {
    result = lmsRunPassPipeline(module, mlirStringRefCreateFromCString(argv[5]),
                                printError, NULL);
    lowered = strstr(argv[5], "pipeline") != NULL;
  } else if (strcmp(mode, "flow") == 0 && argc >= 8) {
    LMSPipelineOptions options = {0};
    options.budget = argv[5];
    options.strategy = argv[6];
    options.lower = argv[7];
    /* live: the budget bounds the live bytes only, no arena lowering */
    options.noArena = argc >= 9 && strcmp(argv[8], "live") == 0;
    /* host=SIZE: the host budget of the offloading planners */
    if (argc >= 9 && strncmp(argv[8], "host=", 5) == 0)
      options.hostBudget = argv[8] + 5;
    /* arena-arguments: the host places the arguments in the arena */
    options.arenaArguments =
        argc >= 9 && strcmp(argv[8], "arena-arguments") == 0;
    result = lmsRunPipeline(module, &options, printError, NULL);
    lowered = strcmp(argv[7], "none") != 0;
  } else {
    fprintf(stderr, "error: unknown mode '%s'\n", mode);
    return 2;
  }
  if (mlirLogicalResultIsFailure(result)) {
    fprintf(stderr, "error: the pipeline failed\n");
    mlirModuleDestroy(module);
    mlirContextDestroy(context);
    return 1;
  }

  int arena =
      strcmp(mode, "flow") == 0 && !(argc >= 9 && strcmp(argv[8], "live") == 0);
  if (!lowered || arena)
    printf("arena after: %" PRId64 "\n", lmsGetArenaBytes(module, funcName));
  if (lowered && argc >= 9 && strcmp(argv[8], "arena-arguments") == 0) {
    /* Where the host writes each argument and reads each result. */
    for (intptr_t i = 0;; ++i) {
      int64_t offset = lmsGetArgumentOffset(module, funcName, i);
      if (offset == -2)
        break;
      printf("argument %ld at: %" PRId64 "\n", (long)i, offset);
    }
    for (intptr_t i = 0;; ++i) {
      int64_t offset = lmsGetResultOffset(module, funcName, i);
      if (offset == -2)
        break;
      printf("result %ld at: %" PRId64 "\n", (long)i, offset);
    }
  }
  if (!lowered) {
    int64_t after = lmsGetPeakBytes(module, funcName);
    printf("peak after: %" PRId64 "\n", after);
    if (after < 0 || after > maxPeak) {
      fprintf(stderr, "error: peak %" PRId64 " exceeds %" PRId64 "\n", after,
              maxPeak);
      return 1;
    }
  }
  mlirOperationPrint(mlirModuleGetOperation(module), printToFile, stdout);
  printf("\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}
