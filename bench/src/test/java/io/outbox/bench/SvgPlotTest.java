package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

class SvgPlotTest {

  @Test
  void logScaleSpansWholeDecadesAndPlacesThemEvenly() {
    SvgPlot.Scale s = SvgPlot.Scale.logOf(List.of(100.0, 1000.0, 5000.0));
    assertThat(s.min()).isEqualTo(100);
    assertThat(s.max()).isEqualTo(10_000);
    assertThat(s.fraction(100)).isCloseTo(0, within(1e-9));
    assertThat(s.fraction(1000)).isCloseTo(0.5, within(1e-9));
    assertThat(s.fraction(10_000)).isCloseTo(1, within(1e-9));
    // Exact powers of ten stay the bounds; a single value gets a decade.
    assertThat(SvgPlot.Scale.logOf(List.of(10_000.0, 1_000_000.0)).min()).isEqualTo(10_000);
    assertThat(SvgPlot.Scale.logOf(List.of(10_000.0, 1_000_000.0)).max()).isEqualTo(1_000_000);
    SvgPlot.Scale one = SvgPlot.Scale.logOf(List.of(1000.0));
    assertThat(one.max()).isEqualTo(10 * one.min());
  }

  @Test
  void logScaleIgnoresWhatItCannotDraw() {
    SvgPlot.Scale s = SvgPlot.Scale.logOf(List.of(0.0, -3.0, Double.NaN, 3.2, 870.0));
    assertThat(s.min()).isEqualTo(1);
    assertThat(s.max()).isEqualTo(1000);
    assertThat(s.accepts(0)).isFalse();
    assertThat(s.accepts(Double.NaN)).isFalse();
    assertThat(s.accepts(0.5)).isTrue();
    assertThat(SvgPlot.Scale.logOf(List.of(Double.NaN))).isEqualTo(new SvgPlot.Scale(1, 10, true));
  }

  @Test
  void logTicksAreDecadesWithTwosAndFivesWhenTheRangeIsShort() {
    assertThat(SvgPlot.Scale.logOf(List.of(100.0, 5000.0)).ticks())
        .containsExactly(100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0);
    assertThat(SvgPlot.Scale.logOf(List.of(2.0, 30_000.0)).ticks())
        .containsExactly(1.0, 10.0, 100.0, 1000.0, 10_000.0, 100_000.0);
    assertThat(SvgPlot.Scale.logOf(List.of(0.2, 0.9)).ticks()).containsExactly(0.1, 0.2, 0.5, 1.0);
  }

  @Test
  void linearScaleStartsAtZeroAndEndsOnARoundStep() {
    SvgPlot.Scale s = SvgPlot.Scale.linearFromZero(List.of(1200.0, 7300.0));
    assertThat(s.min()).isZero();
    assertThat(s.max()).isEqualTo(8000);
    assertThat(s.ticks()).containsExactly(0.0, 2000.0, 4000.0, 6000.0, 8000.0);
    assertThat(s.fraction(2000)).isCloseTo(0.25, within(1e-9));
    assertThat(SvgPlot.Scale.linearFromZero(List.of(0.46, 0.389)).ticks())
        .containsExactly(0.0, 0.1, 0.2, 0.3, 0.4, 0.5);
    assertThat(SvgPlot.Scale.linearFromZero(List.of(Double.NaN)).max()).isEqualTo(1);
  }

  @Test
  void niceStepsAreOneTwoOrFiveTimesAPowerOfTen() {
    assertThat(SvgPlot.niceStep(1460)).isEqualTo(2000);
    assertThat(SvgPlot.niceStep(0.092)).isCloseTo(0.1, within(1e-12));
    assertThat(SvgPlot.niceStep(3)).isEqualTo(5);
    assertThat(SvgPlot.niceStep(5)).isEqualTo(5);
    assertThat(SvgPlot.niceStep(7)).isEqualTo(10);
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
  void escapesMarkupInText() {
    assertThat(SvgPlot.escape("p99 < 25 ms & \"x\" > 'y'"))
        .isEqualTo("p99 &lt; 25 ms &amp; &quot;x&quot; &gt; &apos;y&apos;");
  }

  @Test
  void pathMovesThenLinesAndBreaksAtPointsItCannotDraw() {
    SvgPlot.Scale x = new SvgPlot.Scale(10, 1000, true);
    SvgPlot.Scale y = new SvgPlot.Scale(0, 100, false);
    List<double[]> points = new ArrayList<>();
    points.add(new double[] {10, 0});
    points.add(new double[] {100, 50});
    points.add(new double[] {300, Double.NaN});
    points.add(new double[] {1000, 100});
    // Plot area at (50, 20), 200 x 100: y grows downwards.
    assertThat(SvgPlot.path(points, x, y, 50, 20, 200, 100))
        .isEqualTo("M50.0 120.0 L150.0 70.0 M250.0 20.0");
    assertThat(SvgPlot.path(List.of(new double[] {0, 1}), x, y, 0, 0, 10, 10)).isEmpty();
  }

  @Test
  void rendersWellFormedSvgNamingEverySeries() throws Exception {
    List<double[]> p50 = List.of(new double[] {100, 12}, new double[] {1000, 30});
    List<double[]> p99 = List.of(new double[] {100, 80}, new double[] {1000, 400});
    String svg =
        SvgPlot.render(
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
            new SvgPlot.Marker(1000, "saturated"));

    Document doc =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
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
    NodeList paths = doc.getElementsByTagName("path");
    assertThat(paths.getLength()).isEqualTo(2);
    assertThat(paths.item(1).getAttributes().getNamedItem("stroke-dasharray")).isNotNull();
    assertThat(paths.item(0).getAttributes().getNamedItem("stroke-dasharray")).isNull();
    assertThat(doc.getElementsByTagName("circle").getLength()).isEqualTo(4);
  }
}
