//===- lms-opt-server.cpp - lms-opt in one process, request by request ----===//
//
// What lms-opt does to one input (parse, verify, run a pass pipeline with
// the verifier after each pass, print), for many inputs in one process: the
// mutation fuzzer (bench/fuzz/mutate.py --server) and the property runner
// (bench/property/run.py) send their runs here instead of starting lms-opt
// for each, which is most of their cost.
//
// Protocol: requests on standard input, responses on the file descriptor
// that --response-fd names (3 by default).
//
//   request:  "RUN <flags> <pipeline bytes> <budget bytes> <name bytes>
//             <input bytes>\n" followed by the pipeline (the passes inside
//             `builtin.module(...)`, nested implicitly as lms-opt's command
//             line does), the global --lms-budget value (may be empty), the
//             input's file name (for locations; lms-opt says <stdin> for
//             standard input) and the input IR;
//             flags: 1 = -allow-unregistered-dialect, 2 = print the output,
//             4 = the output IR apart from standard output (as lms-opt's
//             -o FILE writes it; with 2)
//   response: "DONE <exit status> <stdout bytes> <stderr bytes>\n" followed
//             by what lms-opt would have written to standard output (what
//             the passes print, then the output IR when asked) and to
//             standard error (the diagnostics and what the passes print
//             there); with flag 4, "DONE <exit status> <stdout bytes>
//             <stderr bytes> <output bytes>\n" followed by standard output
//             (what the passes print), standard error and the output IR
//             (empty when the run failed).
//
// Each request gets a fresh MLIRContext, without threading (lms-opt's
// default has it on; no LMS pass depends on it). A crash ends the process; the
// client counts it as lms-opt would (a signal) and starts another server.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"
#include "LMS/Transforms/GlobalOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;

namespace {

/// Reads exactly `size` bytes from `fd`.
bool readExactly(int fd, std::string &into, size_t size) {
  into.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::read(fd, into.data() + done, size - done);
    if (got <= 0)
      return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

bool readLine(std::string &line) {
  line.clear();
  char c;
  while (true) {
    ssize_t got = ::read(0, &c, 1);
    if (got <= 0)
      return false;
    if (c == '\n')
      return true;
    line.push_back(c);
  }
}

void writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t wrote = ::write(fd, data.data() + done, data.size() - done);
    if (wrote <= 0)
      std::_Exit(2);
    done += static_cast<size_t>(wrote);
  }
}

/// Sends file descriptor `fd` to a fresh in-memory file until `restore`.
struct Capture {
  explicit Capture(int fd) : fd(fd) {
    file = ::memfd_create("lms-opt-server", 0);
    saved = ::dup(fd);
    if (file < 0 || saved < 0 || ::dup2(file, fd) < 0)
      std::_Exit(2);
  }
  /// Restores the descriptor and returns what was written to it.
  std::string restore() {
    ::dup2(saved, fd);
    ::close(saved);
    std::string text;
    off_t size = ::lseek(file, 0, SEEK_END);
    ::lseek(file, 0, SEEK_SET);
    if (size > 0 && !readExactly(file, text, static_cast<size_t>(size)))
      std::_Exit(2);
    ::close(file);
    return text;
  }

private:
  int fd, file = -1, saved = -1;
};

/// One lms-opt run: the exit status lms-opt would return.
int runOne(const DialectRegistry &registry, unsigned flags,
           const std::string &pipeline, const std::string &name,
           const std::string &input, raw_ostream &out, raw_ostream &err) {
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(flags & 1);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input, name), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, err);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  PassManager pm(&context, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineErr(pipelineErrors);
  if (failed(parsePassPipeline(pipeline, pm, pipelineErr))) {
    err << pipelineErrors;
    return 1;
  }
  if (failed(pm.run(*module)))
    return 1;
  if (flags & 2) {
    module->print(out);
    out << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  DialectRegistry registry;
  mlir::lms::registerAllLMS(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  static llvm::cl::opt<int> responseFd(
      "response-fd", llvm::cl::desc("File descriptor to write responses to"),
      llvm::cl::init(3));
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lms-opt, request by request (bench/fuzz/mutate.py, "
      "bench/property/run.py)\n");
  if (responseFd < 3 || ::fcntl(responseFd, F_GETFD) < 0) {
    llvm::errs() << "lms-opt-server: file descriptor " << responseFd
                 << " (responses) is not open, or is a standard stream\n";
    return 1;
  }

  std::string line, pipeline, budget, name, input;
  while (readLine(line)) {
    unsigned flags = 0;
    size_t pipelineSize = 0, budgetSize = 0, nameSize = 0, inputSize = 0;
    if (std::sscanf(line.c_str(), "RUN %u %zu %zu %zu %zu", &flags,
                    &pipelineSize, &budgetSize, &nameSize, &inputSize) != 5) {
      llvm::errs() << "lms-opt-server: bad request '" << line << "'\n";
      return 1;
    }
    if (!readExactly(0, pipeline, pipelineSize) ||
        !readExactly(0, budget, budgetSize) ||
        !readExactly(0, name, nameSize) || !readExactly(0, input, inputSize))
      return 1;
    mlir::lms::setGlobalBudget(budget);

    std::string outText, errText, irText;
    int status;
    {
      llvm::outs().flush();
      llvm::errs().flush();
      std::fflush(nullptr);
      Capture capturedOut(1), capturedErr(2);
      std::string diagnostics, printed;
      llvm::raw_string_ostream diagStream(diagnostics), printedStream(printed);
      status = runOne(registry, flags, pipeline, name, input, printedStream,
                      diagStream);
      llvm::outs().flush();
      llvm::errs().flush();
      std::fflush(nullptr);
      outText = capturedOut.restore();
      errText = capturedErr.restore() + diagnostics;
      if (flags & 4)
        irText = std::move(printed);
      else
        outText += printed;
    }
    std::string header = "DONE " + std::to_string(status) + " " +
                         std::to_string(outText.size()) + " " +
                         std::to_string(errText.size());
    if (flags & 4)
      header += " " + std::to_string(irText.size());
    writeAll(responseFd, header + "\n");
    writeAll(responseFd, outText);
    writeAll(responseFd, errText);
    writeAll(responseFd, irText);
  }
  return 0;
}
