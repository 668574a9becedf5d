//===- Placement.cpp - Arena placement: quality and time ------------------===//
//
// Places the allocations of plans in one arena and reports the arena over the
// live-bytes peak (the lower bound) and the time it took:
//
//  - every graph file given, in its reference order (a plan file's buffers
//    are placed by `lms-plan --graph G --check PLAN --arena`, as
//    bench/remat/run.py does);
//  - the buffers of every report given with --reports (the JSON of
//    --lms-report-memory=format=json: each function's arena buffers over the
//    plan steps they are alive, e.g. the headline models' offloading plans
//    as bench/arena_models.py makes them);
//  - synthetic training-shaped programs of n buffers (a forward pass whose
//    activations live until their backward use, gradients short-lived, and a
//    few weights alive throughout; sizes drawn from a wide distribution), up
//    to 10^5 buffers.
//
//   lms-bench-placement [--graphs G1.json,G2.json] [--reports R1.json]
//                       [--sizes 1000,10000,100000] [--json out.json]
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Placement.h"
#include "LMS/Graph/GraphFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <limits>
#include <random>

using namespace lms;

static llvm::cl::list<std::string>
    graphs("graphs", llvm::cl::desc("Graph files (reference order)"),
           llvm::cl::CommaSeparated);
static llvm::cl::list<std::string>
    reports("reports",
            llvm::cl::desc("Memory reports (--lms-report-memory JSON) whose "
                           "arena buffers to place"),
            llvm::cl::CommaSeparated);
static llvm::cl::list<int64_t> sizes("sizes",
                                     llvm::cl::desc("Synthetic buffer counts"),
                                     llvm::cl::CommaSeparated);
static llvm::cl::opt<std::string>
    jsonPath("json", llvm::cl::desc("Write JSON here"), llvm::cl::init(""));
static llvm::cl::opt<unsigned>
    workLimit("work",
              llvm::cl::desc("The placer's work limit in millions of "
                             "overlapping pairs (0: its default)"),
              llvm::cl::init(0));
static llvm::cl::opt<bool> canonical(
    "canonical",
    llvm::cl::desc("Run the placer's canonical search (its sixth step; "
                   "--canonical=false measures the placer without it)"),
    llvm::cl::init(true));
static llvm::cl::opt<bool>
    sweep("sweep",
          llvm::cl::desc("Run the placer's sweep search (its last step; "
                         "--sweep=false measures the placer without it)"),
          llvm::cl::init(true));
static llvm::cl::opt<uint64_t>
    alignment("alignment", llvm::cl::desc("Alignment of offsets and sizes"),
              llvm::cl::init(256));

/// A training step of n buffers: layers of the forward pass each allocate an
/// activation (alive until its backward op) and a temporary (alive one or
/// two steps); the backward pass allocates gradients that die soon; a few
/// weights are alive throughout. Sizes are log-uniform over three decades.
static std::vector<BufferLife> syntheticTraining(int64_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> exponent(12, 22); // 4 KiB..4 MiB
  auto size = [&] {
    return static_cast<uint64_t>(std::exp2(exponent(random)));
  };
  std::vector<BufferLife> lives;
  int64_t weights = std::max<int64_t>(1, n / 50);
  int64_t layers = std::max<int64_t>(1, (n - weights + 2) / 3);
  uint32_t steps = static_cast<uint32_t>(2 * layers + 2);
  for (int64_t w = 0; w < weights; ++w)
    lives.push_back({-1, -1, size(), 0, steps});
  for (int64_t l = 0; l < layers && static_cast<int64_t>(lives.size()) < n;
       ++l) {
    uint32_t forward = static_cast<uint32_t>(l);
    uint32_t backward = steps - 1 - static_cast<uint32_t>(l);
    lives.push_back({-1, -1, size(), forward, backward + 1});
    lives.push_back({-1, -1, size(), forward,
                     forward + 1 + static_cast<uint32_t>(random() % 2)});
    lives.push_back({-1, -1, size(), backward, std::min(steps, backward + 2)});
  }
  return lives;
}

/// The arena buffers of each function of a memory report, over the plan
/// steps they are alive (begin_step, end_step), one list per function with
/// buffers. Fails with a message on a file that is not such a report.
static llvm::Expected<
    std::vector<std::pair<std::string, std::vector<BufferLife>>>>
readReport(llvm::StringRef path) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + message);
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path);
  if (!text)
    return fail(text.getError().message());
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*text)->getBuffer());
  if (!root)
    return fail(llvm::toString(root.takeError()));
  const llvm::json::Object *object = root->getAsObject();
  const llvm::json::Array *functions =
      object ? object->getArray("functions") : nullptr;
  if (!functions)
    return fail("not a memory report (no \"functions\")");
  std::vector<std::pair<std::string, std::vector<BufferLife>>> result;
  for (const llvm::json::Value &function : *functions) {
    const llvm::json::Object *f = function.getAsObject();
    const llvm::json::Object *arena = f ? f->getObject("arena") : nullptr;
    const llvm::json::Array *buffers =
        arena ? arena->getArray("buffers") : nullptr;
    if (!buffers || buffers->empty())
      continue;
    std::vector<BufferLife> lives;
    for (const llvm::json::Value &buffer : *buffers) {
      const llvm::json::Object *b = buffer.getAsObject();
      std::optional<int64_t> bytes = b ? b->getInteger("bytes") : std::nullopt;
      std::optional<int64_t> begin =
          b ? b->getInteger("begin_step") : std::nullopt;
      std::optional<int64_t> end = b ? b->getInteger("end_step") : std::nullopt;
      if (!bytes || !begin || !end || *bytes < 0 || *begin < 0 ||
          *end < *begin || *end > std::numeric_limits<uint32_t>::max())
        return fail("an arena buffer without bytes, begin_step and end_step "
                    "(a report of an older lms-opt?)");
      lives.push_back({-1, -1, static_cast<uint64_t>(*bytes),
                       static_cast<uint32_t>(*begin),
                       static_cast<uint32_t>(*end)});
    }
    std::optional<llvm::StringRef> name = f->getString("name");
    result.push_back({name ? name->str() : "?", std::move(lives)});
  }
  return result;
}

namespace {
struct Row {
  std::string name;
  size_t buffers = 0;
  Placement placement;
  double seconds = 0;
};
} // namespace

static Row place(std::string name, const std::vector<BufferLife> &lives) {
  PlacementOptions options;
  options.alignment = alignment;
  options.workLimit = workLimit;
  options.canonicalSearch = canonical;
  options.sweepSearch = sweep;
  // Timed: each row placed anew, never a placement found for an earlier one.
  options.reuse = false;
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<Placement> placement = placeBuffers(lives, options);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  Row row{std::move(name), lives.size(), {}, seconds};
  if (!placement) {
    llvm::errs() << row.name << ": " << llvm::toString(placement.takeError())
                 << "\n";
    return row;
  }
  if (llvm::Error err = verifyPlacement(lives, *placement, alignment)) {
    llvm::errs() << row.name
                 << ": invalid placement: " << llvm::toString(std::move(err))
                 << "\n";
    std::exit(1);
  }
  row.placement = std::move(*placement);
  return row;
}

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "arena placement benchmark\n");
  std::vector<Row> rows;
  for (const std::string &path : graphs) {
    llvm::Expected<GraphFile> file = readGraphFile(path);
    if (!file) {
      llvm::errs() << path << ": " << llvm::toString(file.takeError()) << "\n";
      return 1;
    }
    llvm::Expected<std::vector<BufferLife>> lives =
        bufferLives(file->graph, referencePlan(file->graph));
    if (!lives) {
      llvm::errs() << path << ": " << llvm::toString(lives.takeError()) << "\n";
      return 1;
    }
    rows.push_back(place(llvm::sys::path::stem(path).str(), *lives));
  }
  for (const std::string &path : reports) {
    auto functions = readReport(path);
    if (!functions) {
      llvm::errs() << llvm::toString(functions.takeError()) << "\n";
      return 1;
    }
    for (auto &[name, lives] : *functions)
      rows.push_back(
          place((llvm::sys::path::stem(path) + "/@" + name).str(), lives));
  }
  std::vector<int64_t> counts(sizes.begin(), sizes.end());
  if (counts.empty() && graphs.empty() && reports.empty())
    counts = {1000, 10000, 100000};
  for (int64_t n : counts)
    rows.push_back(place(llvm::formatv("synthetic-training-{0}", n).str(),
                         syntheticTraining(n, 1)));

  llvm::outs() << llvm::formatv("{0,-48} {1,8} {2,14} {3,14} {4,8} {5,-22} "
                                "{6,8}\n",
                                "program", "buffers", "live peak", "arena",
                                "ratio", "order", "seconds");
  llvm::json::Array results;
  for (const Row &row : rows) {
    llvm::outs() << llvm::formatv(
        "{0,-48} {1,8} {2,14} {3,14} {4,8:F4} {5,-22} {6,8:F2}\n", row.name,
        row.buffers, row.placement.livePeakBytes, row.placement.arenaBytes,
        row.placement.ratio(), row.placement.strategy, row.seconds);
    results.push_back(llvm::json::Object{
        {"program", row.name},
        {"buffers", static_cast<int64_t>(row.buffers)},
        {"live_peak_bytes", row.placement.livePeakBytes},
        {"arena_bytes", row.placement.arenaBytes},
        {"ratio", row.placement.ratio()},
        {"order", row.placement.strategy},
        {"placements", static_cast<int64_t>(row.placement.placementsTried)},
        {"seconds", row.seconds}});
  }
  if (!jsonPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonPath, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "cannot write " << jsonPath << ": " << ec.message()
                   << "\n";
      return 1;
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"alignment", alignment.getValue()},
                                     {"results", std::move(results)}}))
       << "\n";
  }
  return 0;
}
