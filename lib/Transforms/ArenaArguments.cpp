//===- ArenaArguments.cpp - Arguments in the host's arena -----------------===//
//
// The --lms-mark-arena-arguments pass: marks the functions that no function
// of the module calls (the host's entry points) so that their host places
// the arguments they own in the arena it passes (`lms.arena_arguments`),
// which the arena model counts and --lms-carve-arena lowers.
//
//===----------------------------------------------------------------------===//

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSMARKARENAARGUMENTS
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

struct LMSMarkArenaArgumentsPass
    : public mlir::lms::impl::LMSMarkArenaArgumentsBase<
          LMSMarkArenaArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The functions some call of the module names (one walk, not one per
    // function: modules of IREE's kind have thousands).
    DenseSet<StringAttr> called;
    module.walk([&](CallOpInterface call) {
      if (auto symbol =
              dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee()))
        called.insert(symbol.getRootReference());
    });
    Builder b(module.getContext());
    for (auto func : module.getOps<FunctionOpInterface>()) {
      // A function without buffer arguments (a driver's @main, run by
      // mlir-runner with none) keeps its signature.
      bool buffers = llvm::any_of(func.getArgumentTypes(), [](Type type) {
        return isa<TensorType, BaseMemRefType>(type);
      });
      if (!func.isExternal() && func.isPublic() && buffers &&
          !called.count(SymbolTable::getSymbolName(func)))
        func->setAttr(LMSDialect::getArenaArgumentsAttrName(), b.getUnitAttr());
    }
  }
};

} // namespace
