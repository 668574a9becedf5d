//===- Chart.h - Memory timeline pictures -----------------------*- C++ -*-===//
//
// Draws live device bytes over the schedule as an SVG line chart: one or more
// curves (e.g. before and after a rewrite), the budget line, the peak of each
// curve, and markers where swaps and recomputations happen; or an address
// map: buffers as rectangles over time at their offsets in an arena.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_CHART_H
#define LMS_GRAPH_CHART_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lms {

struct ChartSeries {
  std::string label;
  /// An SVG color ("#1f77b4").
  std::string color;
  /// (x, bytes) points, x increasing; drawn as steps.
  std::vector<std::pair<double, uint64_t>> points;
};

struct ChartMarker {
  enum Kind { SwapOut, SwapWait, SwapIn, Recompute };
  Kind kind;
  double x;
  std::string label;
};

/// A buffer in an address map: alive over [x0, x1) at bytes [y0, y1).
struct ChartRect {
  double x0, x1;
  uint64_t y0, y1;
  std::string label;
};

struct Chart {
  std::string title;
  std::string xLabel = "op in schedule order";
  std::string yLabel = "live device bytes";
  /// Rectangles drawn under the curves (an address map).
  std::vector<ChartRect> rects;
  std::vector<ChartSeries> series;
  std::optional<uint64_t> budget;
  std::vector<ChartMarker> markers;
  int width = 960;
  int height = 420;
};

/// The chart as a standalone SVG document.
std::string renderSvg(const Chart &chart);

/// Several charts stacked vertically in one SVG document.
std::string renderSvg(const std::vector<Chart> &charts);

} // namespace lms

#endif // LMS_GRAPH_CHART_H
