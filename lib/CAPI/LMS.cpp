//===- LMS.cpp - C API of LMS ---------------------------------------------===//

#include "LMS-c/LMS.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/InitLMS.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LMS, lms, mlir::lms::LMSDialect)

void lmsRegisterDialect(MlirDialectRegistry registry) {
  mlir::lms::registerLMSDialect(*unwrap(registry));
}

void lmsRegisterPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::lms::registerLMSPasses();
    mlir::lms::registerLMSPipelines();
  });
}

void lmsSetDefaultBudget(MlirStringRef budget) {
  mlir::lms::setGlobalBudget(unwrap(budget));
}

static void reportError(MlirStringCallback callback, void *userData,
                        const llvm::Twine &message) {
  if (!callback)
    return;
  std::string text = message.str();
  callback(mlirStringRefCreate(text.data(), text.size()), userData);
}

/// The options as the textual form lms-pipeline parses, so that every value
/// is checked by the same parser as on the command line.
static std::string optionString(const LMSPipelineOptions *options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto add = [&](const char *name, const char *value) {
    if (!value || !*value)
      return;
    // Quote values so that spaces and separators survive.
    os << name << "=\"" << value << "\" ";
  };
  if (options) {
    add("budget", options->budget);
    add("device", options->device);
    add("strategy", options->strategy);
    add("lower", options->lower);
    add("report", options->report);
    if (options->noArena)
      add("arena", "false");
    add("host-budget", options->hostBudget);
    if (options->noSplit)
      add("split", "false");
    if (options->arenaArguments)
      add("arena-arguments", "true");
  }
  return text;
}

MlirLogicalResult lmsAddPipeline(MlirOpPassManager passManager,
                                 const LMSPipelineOptions *options,
                                 MlirStringCallback errorCallback,
                                 void *userData) {
  // Enumerated options are checked here for a message that names them (the
  // option parser prints its own complaint to stderr only).
  auto checkOneOf = [&](const char *name, const char *value,
                        std::initializer_list<llvm::StringRef> allowed) {
    if (!value || !*value || llvm::is_contained(allowed, value))
      return true;
    std::string list;
    llvm::raw_string_ostream os(list);
    llvm::interleave(allowed, os, ", ");
    reportError(errorCallback, userData,
                llvm::Twine("invalid LMS pipeline option ") + name + "='" +
                    value + "' (expected one of: " + list + ")");
    return false;
  };
  if (options &&
      (!checkOneOf("strategy", options->strategy,
                   {"plan", "swap", "remat", "schedule", "none"}) ||
       !checkOneOf("lower", options->lower, {"none", "host", "gpu"})))
    return mlirLogicalResultFailure();

  mlir::lms::LMSPipelineOptions parsed;
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsed.parseFromString(optionString(options), errorStream))) {
    reportError(errorCallback, userData,
                "invalid LMS pipeline options: " + llvm::Twine(error));
    return mlirLogicalResultFailure();
  }
  mlir::lms::buildLMSPipeline(*unwrap(passManager), parsed);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult lmsRunPassPipeline(MlirModule module, MlirStringRef pipeline,
                                     MlirStringCallback errorCallback,
                                     void *userData) {
  ModuleOp moduleOp = unwrap(module);
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  FailureOr<OpPassManager> parsed =
      parsePassPipeline(unwrap(pipeline), errorStream);
  if (failed(parsed)) {
    reportError(errorCallback, userData, error);
    return mlirLogicalResultFailure();
  }
  PassManager pm(moduleOp->getContext(), parsed->getOpAnchorName());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  return wrap(pm.run(moduleOp));
}

MlirLogicalResult lmsRunPipeline(MlirModule module,
                                 const LMSPipelineOptions *options,
                                 MlirStringCallback errorCallback,
                                 void *userData) {
  ModuleOp moduleOp = unwrap(module);
  PassManager pm(moduleOp->getContext());
  if (mlirLogicalResultIsFailure(
          lmsAddPipeline(wrap(static_cast<OpPassManager *>(&pm)), options,
                         errorCallback, userData)))
    return mlirLogicalResultFailure();
  return wrap(pm.run(moduleOp));
}

/// The function `symbol` of `module`, or null with a diagnostic naming
/// `api`.
static Operation *lookupFunction(ModuleOp moduleOp, MlirStringRef symbol,
                                 StringRef api) {
  Operation *func = SymbolTable::lookupSymbolIn(moduleOp, unwrap(symbol));
  if (!func) {
    emitError(moduleOp.getLoc())
        << api << ": no function '" << unwrap(symbol) << "' in the module";
    return nullptr;
  }
  if (!isa<FunctionOpInterface>(func)) {
    emitError(func->getLoc())
        << api << ": '" << unwrap(symbol) << "' is not a function";
    return nullptr;
  }
  return func;
}

int64_t lmsGetPeakBytes(MlirModule module, MlirStringRef symbol) {
  Operation *func = lookupFunction(unwrap(module), symbol, "lmsGetPeakBytes");
  if (!func)
    return -1;
  FailureOr<mlir::lms::FunctionGraph> graph =
      mlir::lms::FunctionGraph::build(func);
  if (failed(graph))
    return -1;
  mlir::lms::MemoryPeakAnalysis peak(*graph);
  return static_cast<int64_t>(peak.getPeakBytes());
}

/// Entry `index` of the offsets `name` on the function `symbol`, or -2.
static int64_t layoutOffset(MlirModule module, MlirStringRef symbol,
                            intptr_t index, llvm::StringRef name,
                            const char *entryPoint) {
  Operation *func = lookupFunction(unwrap(module), symbol, entryPoint);
  if (!func)
    return -2;
  auto offsets = func->getAttrOfType<DenseI64ArrayAttr>(name);
  if (!offsets || index < 0 || index >= offsets.size())
    return -2;
  return offsets[index];
}

int64_t lmsGetArgumentOffset(MlirModule module, MlirStringRef symbol,
                             intptr_t index) {
  return layoutOffset(module, symbol, index,
                      mlir::lms::LMSDialect::getArgumentOffsetsAttrName(),
                      "lmsGetArgumentOffset");
}

int64_t lmsGetResultOffset(MlirModule module, MlirStringRef symbol,
                           intptr_t index) {
  return layoutOffset(module, symbol, index,
                      mlir::lms::LMSDialect::getResultOffsetsAttrName(),
                      "lmsGetResultOffset");
}

int64_t lmsGetArenaBytes(MlirModule module, MlirStringRef symbol) {
  Operation *func = lookupFunction(unwrap(module), symbol, "lmsGetArenaBytes");
  if (!func)
    return -1;
  // Carved already: the arena the function allocates.
  if (auto bytes = func->getAttrOfType<IntegerAttr>("lms.arena_bytes"))
    return bytes.getInt();
  mlir::lms::GraphOptions options;
  options.alignment = 256;
  FailureOr<mlir::lms::FunctionGraph> graph =
      mlir::lms::FunctionGraph::build(func, options);
  if (failed(graph))
    return -1;
  return static_cast<int64_t>(mlir::lms::budgetedBytes(*graph, [&] {
    options.arena = true;
    return options;
  }()));
}
