//===- lms-embed.cpp - A host compiler that adds LMS to its pipeline ------===//
//
//   lms-embed input.mlir --budget=48MiB [--strategy=plan|swap|remat]
//             [--lower=none|host|gpu] [-o out.mlir]
//
// Parses the input, prints each function's peak device memory, runs the LMS
// flow built with mlir::lms::buildLMSPipeline() in its own PassManager, and
// prints the peaks again (unless lowered) and the result. This is all a host
// compiler needs: the registration calls and one pipeline builder.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/InitLMS.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file"),
                                             llvm::cl::init("-"));
static llvm::cl::opt<std::string>
    budget("budget", llvm::cl::desc("Device-memory budget (48MiB, 60%)"),
           llvm::cl::Required);
static llvm::cl::opt<std::string>
    strategy("strategy", llvm::cl::desc("plan, swap, remat or none"),
             llvm::cl::init("plan"));
static llvm::cl::opt<std::string>
    lower("lower", llvm::cl::desc("none, host or gpu"), llvm::cl::init("none"));

static void printPeaks(ModuleOp module, llvm::StringRef when) {
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    FailureOr<mlir::lms::FunctionGraph> graph =
        mlir::lms::FunctionGraph::build(func);
    if (failed(graph))
      return;
    mlir::lms::MemoryPeakAnalysis peak(*graph);
    llvm::errs() << "@" << func.getSymName() << " peak " << when << ": "
                 << peak.getPeakBytes() << " bytes\n";
  });
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "LMS embedded in a host\n");

  // 1. Registration: the host's dialects plus LMS.
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  mlir::lms::registerLMSDialect(registry);
  MLIRContext context(registry);

  // 2. The options, checked like any pass pipeline's (the textual form).
  mlir::lms::LMSPipelineOptions options;
  std::string text =
      "budget=" + budget + " strategy=" + strategy + " lower=" + lower;
  if (failed(options.parseFromString(text, llvm::errs()))) {
    llvm::errs() << "lms-embed: invalid options: " << text << "\n";
    return 1;
  }

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  printPeaks(*module, "before");

  // 3. The host's own pass manager with the LMS flow in it.
  PassManager pm(&context);
  mlir::lms::buildLMSPipeline(pm, options);
  if (failed(pm.run(*module))) {
    llvm::errs() << "lms-embed: the LMS pipeline failed\n";
    return 1;
  }
  if (options.lower == mlir::lms::LMSLowering::None)
    printPeaks(*module, "after");

  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
