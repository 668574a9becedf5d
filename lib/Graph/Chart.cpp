//===- Chart.cpp - Memory timeline pictures -------------------------------===//

#include "LMS/Graph/Chart.h"
#include "LMS/Graph/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace lms;

namespace {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A "nice" tick step for a range, 1/2/5 x 10^k (or powers of 1024 for bytes).
double niceStep(double range, int targetTicks) {
  if (range <= 0)
    return 1;
  double raw = range / targetTicks;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude)
      return m * magnitude;
  return 10 * magnitude;
}

double niceByteStep(double range, int targetTicks) {
  if (range <= 0)
    return 1;
  double unit = 1;
  while (range / unit >= 2048)
    unit *= 1024;
  return niceStep(range / unit, targetTicks) * unit;
}

void renderOne(llvm::raw_ostream &os, const Chart &chart, int yOffset) {
  const double left = 90, right = 30, top = 40, bottom = 60;
  double plotW = chart.width - left - right;
  double plotH = chart.height - top - bottom;

  double xMin = 0, xMax = 1;
  uint64_t yMaxBytes = chart.budget.value_or(0);
  bool first = true;
  for (const ChartSeries &series : chart.series)
    for (auto [x, y] : series.points) {
      if (first) {
        xMin = xMax = x;
        first = false;
      }
      xMin = std::min(xMin, x);
      xMax = std::max(xMax, x + 1);
      yMaxBytes = std::max(yMaxBytes, y);
    }
  for (const ChartRect &rect : chart.rects) {
    if (first) {
      xMin = rect.x0;
      xMax = rect.x1;
      first = false;
    }
    xMin = std::min(xMin, rect.x0);
    xMax = std::max(xMax, rect.x1);
    yMaxBytes = std::max(yMaxBytes, rect.y1);
  }
  double yMax = std::max<double>(1, yMaxBytes) * 1.08;
  auto px = [&](double x) { return left + (x - xMin) / (xMax - xMin) * plotW; };
  auto py = [&](double y) { return yOffset + top + plotH - y / yMax * plotH; };

  os << llvm::formatv("<g font-family=\"sans-serif\" font-size=\"12\">\n");
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"15\" "
                      "font-weight=\"bold\">{2}</text>\n",
                      left, yOffset + 24, escape(chart.title));
  // Grid and y ticks.
  double yStep = niceByteStep(yMax, 5);
  for (double y = 0; y <= yMax; y += yStep) {
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2}\" "
                        "y2=\"{1:F1}\" stroke=\"#e0e0e0\"/>\n",
                        left, py(y), left + plotW);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" text-anchor=\"end\" "
                        "fill=\"#444\">{2}</text>\n",
                        left - 6, py(y) + 4,
                        escape(formatBytes(static_cast<uint64_t>(y))));
  }
  // X ticks.
  double xStep = std::max(1.0, niceStep(xMax - xMin, 8));
  for (double x = std::ceil(xMin / xStep) * xStep; x <= xMax; x += xStep) {
    os << llvm::formatv("<line x1=\"{0:F1}\" y1=\"{1:F1}\" x2=\"{0:F1}\" "
                        "y2=\"{2:F1}\" stroke=\"#999\"/>\n",
                        px(x), py(0), py(0) + 5);
    os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\" "
                        "text-anchor=\"middle\" fill=\"#444\">{2}</text>\n",
                        px(x), py(0) + 18, static_cast<int64_t>(x));
  }
  os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\" text-anchor=\"middle\" "
                      "fill=\"#444\">{2}</text>\n",
                      left + plotW / 2,
                      static_cast<double>(yOffset + chart.height - 18),
                      escape(chart.xLabel));
  os << llvm::formatv("<text transform=\"translate(18,{0:F1}) rotate(-90)\" "
                      "text-anchor=\"middle\" fill=\"#444\">{1}</text>\n",
                      yOffset + top + plotH / 2, escape(chart.yLabel));
  // Axes.
  os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2:F1}\" "
                      "height=\"{3:F1}\" fill=\"none\" stroke=\"#666\"/>\n",
                      left, yOffset + top, plotW, plotH);

  // Rectangles, in ten alternating colours, with their labels as tooltips.
  static const char *const palette[] = {
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  for (auto [i, rect] : llvm::enumerate(chart.rects)) {
    double x0 = px(rect.x0), x1 = px(rect.x1);
    double y0 = py(static_cast<double>(rect.y1));
    double y1 = py(static_cast<double>(rect.y0));
    os << llvm::formatv("<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" "
                        "height=\"{3:F1}\" fill=\"{4}\" fill-opacity=\"0.7\" "
                        "stroke=\"white\" stroke-width=\"0.3\"><title>{5}"
                        "</title></rect>\n",
                        x0, y0, std::max(0.5, x1 - x0), std::max(0.5, y1 - y0),
                        palette[i % 10], escape(rect.label));
  }
  // Curves as steps: each point holds until the next x.
  int seriesIndex = 0;
  for (const ChartSeries &series : chart.series) {
    if (series.points.empty())
      continue;
    std::string path;
    llvm::raw_string_ostream ps(path);
    for (size_t i = 0; i < series.points.size(); ++i) {
      auto [x, y] = series.points[i];
      double nextX =
          i + 1 < series.points.size() ? series.points[i + 1].first : x + 1;
      ps << (i == 0 ? "M" : " L")
         << llvm::formatv("{0:F1},{1:F1}", px(x), py(y))
         << llvm::formatv(" L{0:F1},{1:F1}", px(nextX), py(y));
    }
    os << llvm::formatv("<path d=\"{0}\" fill=\"none\" stroke=\"{1}\" "
                        "stroke-width=\"1.6\"/>\n",
                        path, series.color);
    // The peak of the curve.
    auto peak = std::max_element(
        series.points.begin(), series.points.end(),
        [](const auto &a, const auto &b) { return a.second < b.second; });
    os << llvm::formatv("<circle cx=\"{0:F1}\" cy=\"{1:F1}\" r=\"4\" "
                        "fill=\"{2}\"/>\n",
                        px(peak->first), py(peak->second), series.color);
    os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\" fill=\"{2}\" "
                        "font-weight=\"bold\">peak {3} at op {4}</text>\n",
                        std::min(px(peak->first) + 6, left + plotW - 190),
                        py(peak->second) - 6 + 15 * seriesIndex, series.color,
                        escape(formatBytes(peak->second)),
                        static_cast<int64_t>(peak->first));
    ++seriesIndex;
  }
  // The budget.
  if (chart.budget) {
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2:F1}\" "
                        "y2=\"{1:F1}\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                        "stroke-dasharray=\"6,4\"/>\n",
                        left, py(*chart.budget), left + plotW);
    os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\" text-anchor=\"end\" "
                        "fill=\"#d62728\">budget {2}</text>\n",
                        left + plotW - 4, py(*chart.budget) + 15,
                        escape(formatBytes(*chart.budget)));
  }
  // Markers along the bottom of the plot.
  for (const ChartMarker &marker : chart.markers) {
    double x = px(marker.x);
    double y = py(0);
    const char *color = "#555";
    std::string shape;
    switch (marker.kind) {
    case ChartMarker::SwapOut:
      color = "#ff7f0e";
      shape = llvm::formatv("M{0:F1},{1:F1} l-4,-7 l8,0 z", x, y - 2).str();
      break;
    case ChartMarker::SwapWait:
      color = "#8c564b";
      shape = llvm::formatv("M{0:F1},{1:F1} l0,-8", x, y - 2).str();
      break;
    case ChartMarker::SwapIn:
      color = "#2ca02c";
      shape = llvm::formatv("M{0:F1},{1:F1} l-4,7 l8,0 z", x, y - 9).str();
      break;
    case ChartMarker::Recompute:
      color = "#9467bd";
      shape =
          llvm::formatv("M{0:F1},{1:F1} l4,-4 l-4,-4 l-4,4 z", x, y - 1).str();
      break;
    }
    os << llvm::formatv("<path d=\"{0}\" fill=\"{1}\" stroke=\"{1}\"><title>"
                        "{2}</title></path>\n",
                        shape, color, escape(marker.label));
  }
  // Legend.
  double lx = left + 10, ly = yOffset + top + 16;
  for (const ChartSeries &series : chart.series) {
    os << llvm::formatv("<line x1=\"{0:F1}\" y1=\"{1:F1}\" x2=\"{2:F1}\" "
                        "y2=\"{1:F1}\" stroke=\"{3}\" stroke-width=\"3\"/>\n",
                        lx, ly - 4, lx + 18, series.color);
    os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\">{2}</text>\n", lx + 24,
                        ly, escape(series.label));
    ly += 16;
  }
  if (!chart.markers.empty()) {
    struct Item {
      ChartMarker::Kind kind;
      const char *color;
      const char *text;
    };
    const Item items[] = {{ChartMarker::SwapOut, "#ff7f0e", "swap-out"},
                          {ChartMarker::SwapWait, "#8c564b", "swap wait"},
                          {ChartMarker::SwapIn, "#2ca02c", "swap-in"},
                          {ChartMarker::Recompute, "#9467bd", "recompute"}};
    for (const Item &item : items) {
      bool present = std::any_of(
          chart.markers.begin(), chart.markers.end(),
          [&](const ChartMarker &m) { return m.kind == item.kind; });
      if (!present)
        continue;
      os << llvm::formatv("<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"10\" "
                          "height=\"10\" fill=\"{2}\"/>\n",
                          lx + 4, ly - 9, item.color);
      os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\">{2}</text>\n",
                          lx + 24, ly, item.text);
      ly += 16;
    }
  }
  os << "</g>\n";
}

} // namespace

std::string lms::renderSvg(const std::vector<Chart> &charts) {
  int width = 0, height = 0;
  for (const Chart &chart : charts) {
    width = std::max(width, chart.width);
    height += chart.height;
  }
  std::string svg;
  llvm::raw_string_ostream os(svg);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
                      width, std::max(height, 1));
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int offset = 0;
  for (const Chart &chart : charts) {
    renderOne(os, chart, offset);
    offset += chart.height;
  }
  os << "</svg>\n";
  return svg;
}

std::string lms::renderSvg(const Chart &chart) {
  return renderSvg(std::vector<Chart>{chart});
}
