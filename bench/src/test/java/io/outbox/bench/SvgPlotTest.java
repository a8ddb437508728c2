package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.jfree.data.Range;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class SvgPlotTest {

  /** The first two colours of the plot's series, as JFreeSVG writes them. */
  private static final String FIRST = "stroke:rgb(31,119,180)";

  private static final String SECOND = "stroke:rgb(214,39,40)";

  @Test
  void logAxesSpanWholeDecadesThatHoldEveryDrawableValue() {
    assertThat(SvgPlot.decades(List.of(100.0, 1000.0, 5000.0))).isEqualTo(new Range(100, 10_000));
    // Exact powers of ten stay the bounds; a single value gets a decade.
    assertThat(SvgPlot.decades(List.of(10_000.0, 1_000_000.0)))
        .isEqualTo(new Range(10_000, 1_000_000));
    assertThat(SvgPlot.decades(List.of(1000.0))).isEqualTo(new Range(1000, 10_000));
    // What a log axis cannot draw is left out; nothing drawable: 1..10.
    assertThat(SvgPlot.decades(List.of(0.0, -3.0, Double.NaN, 3.2, 870.0)))
        .isEqualTo(new Range(1, 1000));
    assertThat(SvgPlot.decades(List.of(0.2, 0.9))).isEqualTo(new Range(0.1, 1));
    assertThat(SvgPlot.decades(List.of(Double.NaN))).isEqualTo(new Range(1, 10));
  }

  @Test
  void labelsAreShort() {
    assertThat(SvgPlot.label(0.5)).isEqualTo("0.5");
    assertThat(SvgPlot.label(20)).isEqualTo("20");
    assertThat(SvgPlot.label(1000)).isEqualTo("1k");
    assertThat(SvgPlot.label(2500)).isEqualTo("2.5k");
    assertThat(SvgPlot.label(1_000_000)).isEqualTo("1M");
    assertThat(SvgPlot.label(0)).isEqualTo("0");
  }

  @Test
  void rendersWellFormedSvgNamingEverySeriesWithTextForEveryLabel() throws Exception {
    String svg = latencyPlot(new SvgPlot.Marker(1000, "saturated"));

    assertThat(svg).startsWith("<svg").endsWith("</svg>\n");
    Document doc = parse(svg);
    assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
    List<String> texts = new ArrayList<>();
    NodeList nodes = doc.getElementsByTagName("text");
    for (int i = 0; i < nodes.getLength(); i++) {
      texts.add(nodes.item(i).getTextContent());
    }
    assertThat(texts)
        .contains(
            "polling->kafka <mark>",
            "load 20 → 25 & shared",
            "p50",
            "bare p99",
            "saturated",
            "events/s",
            "ms",
            "100",
            "1k");
  }

  @Test
  void drawsAReferenceSeriesDashedAndTheRelaysSolid() throws Exception {
    Document doc = parse(latencyPlot(null));

    List<String> p50 = lineStyles(doc, FIRST);
    List<String> bare = lineStyles(doc, SECOND);
    assertThat(p50).hasSize(1).noneMatch(s -> s.contains("stroke-dasharray"));
    assertThat(bare).hasSize(1).allMatch(s -> s.contains("stroke-dasharray"));
  }

  @Test
  void aPointTheAxesCannotDrawBreaksTheLine() throws Exception {
    List<double[]> points = new ArrayList<>();
    points.add(new double[] {10, 1});
    points.add(new double[] {100, 5});
    points.add(new double[] {300, Double.NaN}); // no figure
    points.add(new double[] {1000, 10});
    points.add(new double[] {2000, 0}); // not on a log axis
    points.add(new double[] {5000, 20});
    String svg =
        SvgPlot.render(
            "t",
            "s",
            "x",
            true,
            List.of(
                new SvgPlot.Panel("y", true, List.of(new SvgPlot.Series("broken", points, false)))),
            null);

    // Of the five segments, only 10 -> 100 joins two points the axes can draw.
    assertThat(lineStyles(parse(svg), FIRST)).hasSize(1);
  }

  /** Two series on log axes: p50, and a dashed reference; a marker if given. */
  private static String latencyPlot(SvgPlot.Marker marker) {
    List<double[]> p50 = List.of(new double[] {100, 12}, new double[] {1000, 30});
    List<double[]> p99 = List.of(new double[] {100, 80}, new double[] {1000, 400});
    return SvgPlot.render(
        "polling->kafka <mark>",
        "load 20 → 25 & shared",
        "events/s",
        true,
        List.of(
            new SvgPlot.Panel(
                "ms",
                true,
                List.of(
                    new SvgPlot.Series("p50", p50, false),
                    new SvgPlot.Series("bare p99", p99, true)))),
        marker);
  }

  private static Document parse(String svg) throws Exception {
    return DocumentBuilderFactory.newInstance()
        .newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  /** The styles of the straight lines drawn in {@code stroke}: a series' segments. */
  private static List<String> lineStyles(Document doc, String stroke) {
    List<String> styles = new ArrayList<>();
    NodeList lines = doc.getElementsByTagName("line");
    for (int i = 0; i < lines.getLength(); i++) {
      String style = ((Element) lines.item(i)).getAttribute("style");
      if (style.contains(stroke + ";")) {
        styles.add(style);
      }
    }
    return styles;
  }
}
