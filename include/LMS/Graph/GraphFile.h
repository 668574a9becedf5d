//===- GraphFile.h - Graph and plan files (JSON) ----------------*- C++ -*-===//
//
// The graph schema of the Checkmate/Moccasin graphs
// (../shared/data/graphs/moccasin/normalized):
//
//   {"name": ..., "nodes": [{"id": 3, "name": ..., "cost_cpu": 120,
//    "mem": 4096, "backward": false}, ...],
//    "edges": [[u, v], ...],      // v consumes u's output
//    "topo_order": [ids...]}
//
// and the plan schema of lms-plan:
//
//   {"schedule": [{"compute": id} | {"free": id} | {"swap_out": id} |
//                 {"swap_in": id}, ...],
//    "peak_bytes": N, "compute_cost": X}
//
// A graph becomes a Graph with one op per node, in topo_order, each with one
// output tensor of `mem` bytes (tensor index == op index) and a fixed cost of
// `cost_cpu` (OpCost::seconds). In a plan file, `swap_out` moves a resident
// output to host: counted during the step and released after it.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_GRAPHFILE_H
#define LMS_GRAPH_GRAPHFILE_H

#include "LMS/Graph/Graph.h"
#include "LMS/Graph/Memory.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace lms {

struct Placement;

/// A graph read from a file, with the original node ids.
struct GraphFile {
  std::string name;
  Graph graph;
  /// Node id of each op (op index -> id).
  std::vector<int64_t> ids;
  /// Sum of cost_cpu over all nodes.
  double totalCost = 0;
  /// Per op, the node's "backward" flag (false when absent).
  std::vector<uint8_t> backward;
};

/// Parses a graph file; errors name what is wrong (a missing field, an edge
/// to an unknown node, a topo_order that is not one).
llvm::Expected<GraphFile> parseGraphFile(llvm::StringRef text);
llvm::Expected<GraphFile> readGraphFile(llvm::StringRef path);

/// The compute cost of a plan: the sum of the costs of its compute steps.
double planComputeCost(const Graph &graph, const Plan &plan);

/// A plan as a plan file (node ids from `file`); a SwapOut followed later by
/// the Free that releases the tensor is written as one `swap_out` at the
/// release (the file's swap-out releases at once). With a placement of the
/// plan, each step that allocates carries its "offset" and the file its
/// "arena_bytes". A plan that runs the ops in another order than the
/// graph's (lms-plan --reorder) carries that order as node ids in "order".
std::string writePlanFile(const GraphFile &file, const Plan &plan,
                          uint64_t peakBytes, double computeCost,
                          const Placement *placement = nullptr,
                          llvm::ArrayRef<OpIndex> order = {});

/// Parses a plan file against `file` (ids to indices); a `swap_out` becomes
/// SwapOut + Free.
llvm::Expected<Plan> parsePlanFile(const GraphFile &file, llvm::StringRef text);

} // namespace lms

#endif // LMS_GRAPH_GRAPHFILE_H
