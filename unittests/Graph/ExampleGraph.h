//===- ExampleGraph.h - The small graph the graph-core tests share -*- C++ -*-//
//
// a(100) -> op0 -> x(50); x -> op1 -> y(200), z(10, unused);
// a, y -> op2 -> w(30, returned); a is an argument. With its swap plan (a
// offloaded across op1) and its recomputation plan (x computed twice).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_UNITTESTS_GRAPH_EXAMPLEGRAPH_H
#define LMS_UNITTESTS_GRAPH_EXAMPLEGRAPH_H

#include "LMS/Graph/Memory.h"

namespace lms {

struct Example {
  Graph g;
  TensorIndex a, x, y, z, w;
  Example() {
    a = g.addTensor("a", 100);
    x = g.addTensor("x", 50);
    y = g.addTensor("y", 200);
    z = g.addTensor("z", 10);
    w = g.addTensor("w", 30);
    g.addOp("op0", {a}, {x});
    g.addOp("op1", {x}, {y, z});
    g.addOp("op2", {a, y}, {w});
    g.setLiveOut(w);
  }

  /// a copied out after op0, released, and brought back for op2.
  Plan swapPlan() const {
    return {Step::compute(0), Step::swapOut(a), Step::free(a),
            Step::compute(1), Step::free(x),    Step::free(z),
            Step::swapIn(a),  Step::compute(2), Step::free(a),
            Step::free(y),    Step::freeHost(a)};
  }

  /// x freed after op0 and computed again for op1.
  Plan recomputePlan() const {
    return {Step::compute(0), Step::free(x), Step::compute(0),
            Step::compute(1), Step::free(x), Step::free(z),
            Step::compute(2), Step::free(a), Step::free(y)};
  }
};

} // namespace lms

#endif // LMS_UNITTESTS_GRAPH_EXAMPLEGRAPH_H
