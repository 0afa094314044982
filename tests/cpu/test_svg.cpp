// tuner/report/svg.cpp: the charts are well-formed standalone SVG with the expected elements.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "tests/xml_check.hpp"
#include "tuner/report/svg.hpp"

using namespace autotune::report;
using autotune_test::parse_xml;

TEST_CASE("svg: xml_escape and number formatting", "[cpu][svg]") {
  CHECK(xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  CHECK(xml_escape(std::string("x\x01y")) == "x y");
  CHECK(format_number(3.0) == "3");
  CHECK(format_number(2.50) == "2.5");
  CHECK(format_number(1234.567, 1) == "1234.6");
  CHECK(format_number(-0.0001) == "0");
}

TEST_CASE("svg: nice ticks cover the range in 1-2-5 steps", "[cpu][svg]") {
  auto t = nice_ticks(0, 3900, 6);
  REQUIRE(t.size() >= 4);
  CHECK(t.front() == 0);
  CHECK(t.back() >= 3900);
  double step = t[1] - t[0];
  CHECK((step == 500 || step == 1000 || step == 250));
  CHECK(nice_ticks(5, 5, 4) == std::vector<double>{5});
  CHECK(nice_ticks(2, 1, 4).empty());
}

TEST_CASE("svg: histogram bins count every finite value once", "[cpu][svg]") {
  std::vector<double> v = {72, 73, 75, 100, 250, 600, 600, 1000};
  auto bins = histogram_bins(v, 5, true);
  REQUIRE(bins.size() == 5);
  std::size_t total = 0;
  for (const auto& b : bins) total += b.count;
  CHECK(total == v.size());
  CHECK(bins.front().lo == Approx(72));
  CHECK(bins.back().hi == Approx(1000));
  CHECK(bins.front().count == 4);  // 72, 73, 75, 100 lie in the lowest fifth of log10(72..1000)
  // Log bins ignore non-positive values; one distinct value still gives a bin around it.
  auto one = histogram_bins({-1, 0, 5}, 3, true);
  std::size_t n = 0;
  for (const auto& b : one) n += b.count;
  CHECK(n == 1);
  CHECK(histogram_bins({}, 4, false).empty());
}

TEST_CASE("svg: line chart with a log2 axis, reference lines and highlights", "[cpu][svg]") {
  LineChartSpec c;
  c.id = "chart";
  c.title = "GB/s <by> grid & block";
  c.subtitle = "fixed: A=1";
  c.x_label = "blocks per SM";
  c.y_label = "GB/s";
  c.log2_x = true;
  c.x_ticks = {1, 2, 4, 8};
  for (int s = 0; s < 3; ++s) {
    Series ser;
    ser.name = std::to_string(64 << s) + " threads";
    for (double x : {1.0, 2.0, 4.0, 8.0}) ser.points.push_back({x, 1000 * (s + 1) + 100 * x, ""});
    c.series.push_back(ser);
    c.highlights.push_back({2.0, 1000.0 * (s + 1) + 200, "#000000", "2 x SMs"});
  }
  c.hlines.push_back({4200, "device copy 4200 GB/s", "#b91c1c", "device copy", false});
  c.vlines.push_back({2, "2 x SMs", "#999999"});
  c.highlight_legend = "2 x SMs";
  std::string svg = line_chart(c);
  auto doc = parse_xml(svg);
  INFO(doc.error);
  REQUIRE(doc.ok);
  REQUIRE(!doc.elements.empty());
  CHECK(doc.elements.front().name == "svg");
  CHECK(doc.elements.front().attrs.at("xmlns") == "http://www.w3.org/2000/svg");
  CHECK(doc.elements.front().attrs.at("viewBox") == "0 0 820 460");
  CHECK(doc.count_with("g", "class", "series") == 3);
  CHECK(doc.count("polyline") == 3);
  CHECK(doc.count_with("circle", "class", "highlight") == 3);
  CHECK(doc.count_with("g", "class", "hline") == 1);
  CHECK(doc.count_with("g", "class", "vline") == 1);
  CHECK(doc.count("script") == 0);
  CHECK(svg.find("GB/s &lt;by&gt; grid &amp; block") != std::string::npos);
  CHECK(svg.find("device copy 4200 GB/s") != std::string::npos);
  // Every data point is a circle with a tooltip (12 points + legend markers).
  std::size_t tooltips = 0;
  for (std::size_t i = 0; i < doc.elements.size(); ++i)
    if (doc.elements[i].name == "title" && doc.inside(i, "circle")) ++tooltips;
  CHECK(tooltips == 12 + 3);
  // The y axis reaches the reference line; x tick labels are the given values.
  CHECK(svg.find(">8</text>") != std::string::npos);

  c.series[0].points[0].x = 0;
  CHECK_THROWS_AS(line_chart(c), std::invalid_argument);
  c.series[0].points[0].x = 1;
  c.width = 100;
  CHECK_THROWS_AS(line_chart(c), std::invalid_argument);
}

TEST_CASE("svg: bar chart and histogram are well-formed", "[cpu][svg]") {
  BarChartSpec b;
  b.title = "VARIANT";
  b.series = {"best", "median"};
  b.groups = {{"interleaved_divergent", {459.1, 300}, {}}, {"warp_shuffle", {3688.9, 2000}, {}}, {"none", {-1, -1}, {}}};
  for (const char* l : {"interleaved_strided", "sequential", "first_add_load", "unroll_last_warp", "complete_unroll"})
    b.groups.push_back({l, {std::nan(""), std::nan("")}, {}});
  b.hlines.push_back({4227.6, "device copy", "#b91c1c", "", false});
  std::string svg = bar_chart(b);
  auto doc = parse_xml(svg);
  INFO(doc.error);
  REQUIRE(doc.ok);
  CHECK(doc.count_with("g", "class", "bar-group") == 8);
  // 4 bars (missing values draw none) + background + 2 legend swatches.
  CHECK(doc.count("rect") == 4 + 1 + 2);
  // Long labels are rotated.
  CHECK(svg.find("rotate(-35") != std::string::npos);

  HistogramSpec h;
  h.title = "times";
  h.values = {72.7, 73, 80, 90, 150, 584};
  h.bins = 6;
  h.log_x = true;
  std::string hs = histogram(h);
  auto hd = parse_xml(hs);
  INFO(hd.error);
  REQUIRE(hd.ok);
  CHECK(hd.count_with("g", "class", "bins") == 1);
  std::size_t bars = 0;
  for (std::size_t i = 0; i < hd.elements.size(); ++i)
    if (hd.elements[i].name == "rect" && hd.inside(i, "g")) ++bars;
  CHECK(bars >= 3);
  CHECK(bars <= 6);
}

TEST_CASE("the XML check of the tests rejects what is not well-formed", "[cpu][svg]") {
  CHECK(parse_xml("<svg xmlns=\"http://www.w3.org/2000/svg\"><g class=\"a\"><title>x &amp; y</title></g></svg>").ok);
  const char* bad[] = {
      "<svg><g></svg></g>",            // crossed tags
      "<svg><g class=a></g></svg>",    // unquoted attribute
      "<svg><g a=\"1\" a=\"2\"/></svg>",  // duplicate attribute
      "<svg>a < b</svg>",              // raw '<'
      "<svg>a & b</svg>",              // bad '&'
      "<svg>&nbsp;</svg>",             // undefined entity
      "<svg/><svg/>",                  // two roots
      "<svg>",                         // unclosed
  };
  for (const char* b : bad) {
    const auto doc = parse_xml(b);
    INFO(b);
    CHECK_FALSE(doc.ok);
    CHECK_FALSE(doc.error.empty());
  }
}
