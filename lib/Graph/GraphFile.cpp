//===- GraphFile.cpp - Graph and plan files (JSON) ------------------------===//

#include "LMS/Graph/GraphFile.h"
#include "LMS/Graph/Placement.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <unordered_map>

using namespace lms;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The deepest nesting of arrays and objects in JSON `text` (strings
/// skipped). LLVM's parser recurses per level: a file nested tens of
/// thousands deep overflows the stack, so depth is checked first.
static size_t jsonDepth(llvm::StringRef text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

/// Graph and plan files nest a few levels; this is far beyond any.
static constexpr size_t kMaxJsonDepth = 256;

/// llvm::json::parse, refusing documents nested deeper than kMaxJsonDepth.
static llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text) {
  if (jsonDepth(text) > kMaxJsonDepth)
    return error(llvm::Twine("nested deeper than ") +
                 llvm::Twine(kMaxJsonDepth) + " levels");
  return llvm::json::parse(text);
}

llvm::Expected<GraphFile> lms::parseGraphFile(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> parsed = parseJson(text);
  if (!parsed)
    return error("invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return error("a graph file is a JSON object");
  const llvm::json::Array *nodes = root->getArray("nodes");
  const llvm::json::Array *edges = root->getArray("edges");
  const llvm::json::Array *order = root->getArray("topo_order");
  if (!nodes || !edges || !order)
    return error("a graph file needs \"nodes\", \"edges\" and \"topo_order\"");

  GraphFile file;
  if (std::optional<llvm::StringRef> name = root->getString("name"))
    file.name = name->str();
  struct Node {
    std::string name;
    double cost = 0;
    uint64_t mem = 0;
    bool backward = false;
  };
  std::unordered_map<int64_t, Node> byId;
  for (const llvm::json::Value &value : *nodes) {
    const llvm::json::Object *node = value.getAsObject();
    std::optional<int64_t> id = node ? node->getInteger("id") : std::nullopt;
    if (!id)
      return error("every node needs an integer \"id\"");
    std::optional<double> cost = node->getNumber("cost_cpu");
    std::optional<int64_t> mem = node->getInteger("mem");
    if (!cost || !mem || *mem < 0 || *cost < 0)
      return error(llvm::formatv("node {0} needs a non-negative \"cost_cpu\" "
                                 "and \"mem\"",
                                 *id));
    Node n;
    if (std::optional<llvm::StringRef> name = node->getString("name"))
      n.name = name->str();
    else
      n.name = std::to_string(*id);
    n.cost = *cost;
    n.mem = static_cast<uint64_t>(*mem);
    n.backward = node->getBoolean("backward").value_or(false);
    if (!byId.emplace(*id, n).second)
      return error(llvm::formatv("node {0} appears twice", *id));
  }
  std::unordered_map<int64_t, OpIndex> position;
  for (const llvm::json::Value &value : *order) {
    std::optional<int64_t> id = value.getAsInteger();
    if (!id || !byId.count(*id))
      return error("topo_order names a node that does not exist");
    if (!position.emplace(*id, static_cast<OpIndex>(file.ids.size())).second)
      return error(llvm::formatv("node {0} appears twice in topo_order", *id));
    file.ids.push_back(*id);
  }
  if (file.ids.size() != byId.size())
    return error("topo_order does not list every node");
  std::vector<std::vector<TensorIndex>> inputs(file.ids.size());
  for (const llvm::json::Value &value : *edges) {
    const llvm::json::Array *edge = value.getAsArray();
    if (!edge || edge->size() != 2)
      return error("an edge is a pair [u, v]");
    std::optional<int64_t> u = (*edge)[0].getAsInteger();
    std::optional<int64_t> v = (*edge)[1].getAsInteger();
    if (!u || !v)
      return error("an edge is a pair of integer node ids");
    for (int64_t id : {*u, *v})
      if (!position.count(id))
        return error(llvm::formatv("edge [{0}, {1}] names node {2}, which "
                                   "does not exist",
                                   *u, *v, id));
    OpIndex from = position[*u], to = position[*v];
    if (from >= to)
      return error(
          llvm::formatv("edge [{0}, {1}] goes against topo_order", *u, *v));
    inputs[to].push_back(from);
  }
  for (OpIndex i = 0; i < static_cast<OpIndex>(file.ids.size()); ++i) {
    const Node &node = byId[file.ids[i]];
    TensorIndex t = file.graph.addTensor(node.name, node.mem);
    (void)t;
    OpCost cost;
    cost.seconds = node.cost;
    file.graph.addOp(node.name, inputs[i], {t}, cost);
    file.totalCost += node.cost;
    file.backward.push_back(node.backward);
  }
  return file;
}

llvm::Expected<GraphFile> lms::readGraphFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return error("cannot read " + path + ": " + buffer.getError().message());
  llvm::Expected<GraphFile> file = parseGraphFile((*buffer)->getBuffer());
  if (!file)
    return error(path + ": " + llvm::toString(file.takeError()));
  return file;
}

double lms::planComputeCost(const Graph &graph, const Plan &plan) {
  double cost = 0;
  for (const Step &step : plan)
    if (step.kind == Step::Compute)
      cost += graph.op(step.index).cost.seconds.value_or(0);
  return cost;
}

std::string lms::writePlanFile(const GraphFile &file, const Plan &plan,
                               uint64_t peakBytes, double computeCost,
                               const Placement *placement,
                               llvm::ArrayRef<OpIndex> order) {
  // Where each allocating step puts its tensor: (step, tensor) -> offset.
  std::map<std::pair<uint32_t, TensorIndex>, uint64_t> offsets;
  if (placement)
    for (auto [i, life] : llvm::enumerate(placement->buffers))
      if (life.tensor >= 0)
        offsets[{life.begin, life.tensor}] = placement->offsets[i];
  auto withOffset = [&](llvm::json::Object object, size_t s, TensorIndex t) {
    auto it = offsets.find({static_cast<uint32_t>(s), t});
    if (it != offsets.end())
      object["offset"] = it->second;
    return object;
  };
  // A SwapOut is written where its tensor is released.
  std::vector<uint8_t> swappedOut(file.graph.numTensors(), 0);
  llvm::json::Array schedule;
  for (auto [s, step] : llvm::enumerate(plan)) {
    int64_t id = file.ids[step.index];
    switch (step.kind) {
    case Step::Compute:
      schedule.push_back(withOffset(llvm::json::Object{{"compute", id}}, s,
                                    file.graph.op(step.index).outputs[0]));
      break;
    case Step::SwapOut:
      swappedOut[step.index] = 1;
      break;
    case Step::Free:
      if (swappedOut[step.index]) {
        swappedOut[step.index] = 0;
        schedule.push_back(llvm::json::Object{{"swap_out", id}});
      } else {
        schedule.push_back(llvm::json::Object{{"free", id}});
      }
      break;
    case Step::SwapIn:
      schedule.push_back(
          withOffset(llvm::json::Object{{"swap_in", id}}, s, step.index));
      break;
    case Step::FreeHost:
      break;
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::Object root{{"schedule", std::move(schedule)},
                          {"peak_bytes", peakBytes},
                          {"compute_cost", computeCost}};
  if (placement)
    root["arena_bytes"] = placement->arenaBytes;
  if (!order.empty()) {
    llvm::json::Array ids;
    for (OpIndex op : order)
      ids.push_back(file.ids[op]);
    root["order"] = std::move(ids);
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

llvm::Expected<Plan> lms::parsePlanFile(const GraphFile &file,
                                        llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> parsed = parseJson(text);
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *schedule =
      root ? root->getArray("schedule") : nullptr;
  if (!schedule)
    return error("a plan file needs a \"schedule\" array");
  std::unordered_map<int64_t, int32_t> index;
  for (size_t i = 0; i < file.ids.size(); ++i)
    index[file.ids[i]] = static_cast<int32_t>(i);
  Plan plan;
  for (const llvm::json::Value &value : *schedule) {
    // One key names the step; an "offset" (where --arena placed what the
    // step allocates) may come with it.
    const llvm::json::Object *step = value.getAsObject();
    size_t keys = step ? step->size() - (step->get("offset") ? 1 : 0) : 0;
    if (!step || keys != 1)
      return error("a schedule step is an object with one key (and an "
                   "optional \"offset\")");
    auto entry = llvm::find_if(
        *step, [](const auto &kv) { return kv.first != "offset"; });
    llvm::StringRef kind = entry->first;
    std::optional<int64_t> id = entry->second.getAsInteger();
    if (!id || !index.count(*id))
      return error(llvm::formatv("step '{0}' names an unknown node", kind));
    int32_t i = index[*id];
    if (kind == "compute") {
      plan.push_back(Step::compute(i));
    } else if (kind == "free") {
      plan.push_back(Step::free(i));
    } else if (kind == "swap_out") {
      plan.push_back(Step::swapOut(i));
      plan.push_back(Step::free(i));
    } else if (kind == "swap_in") {
      plan.push_back(Step::swapIn(i));
    } else {
      return error("unknown step kind '" + kind + "'");
    }
  }
  return plan;
}
