package io.outbox.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.awt.Stroke;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Rectangle2D;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.TickType;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.axis.ValueTick;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.text.TextUtils;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.Range;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.ViewBox;

/**
 * The bench's curves as an SVG line chart (JFreeChart, written by JFreeSVG): one or more panels
 * stacked over a shared x axis (linear or log), each with its own y axis and a line per series.
 */
final class SvgPlot {
  private static final int WIDTH = 760;
  private static final int PANEL_HEIGHT = 280;

  /** Title, subtitle and legend above the panels; the x axis below them. */
  private static final int HEADER = 100;

  private static final int FOOTER = 56;
  private static final int GAP = 24;
  private static final Color[] COLORS = {
    new Color(0x1f77b4),
    new Color(0xd62728),
    new Color(0x555555),
    new Color(0x2ca02c),
    new Color(0x9467bd)
  };
  private static final Color MARKER = new Color(0xe67e22);
  private static final Color GRID = new Color(0xcccccc);
  private static final Color MINOR_GRID = new Color(0xeeeeee);
  private static final Stroke THIN = new BasicStroke(1);
  private static final String FONT = "SansSerif";
  private static final Stroke LINE = new BasicStroke(2);
  private static final Stroke DASHED = dashes(2, 6, 4);

  static {
    // JFreeChart's workaround for an old AWT bug draws rotated text (the y labels) as a TextLayout,
    // which JFreeSVG can only write as glyph outlines; plain drawString gives SVG text.
    TextUtils.setUseDrawRotatedStringWorkaround(false);
  }

  private SvgPlot() {}

  /**
   * A series: points {@code (x, y)}; a point whose y is NaN (or not positive on a log axis) is left
   * out and breaks the line.
   *
   * @param dashed drawn dashed: a reference line (a baseline), not the relay
   */
  record Series(String name, List<double[]> points, boolean dashed) {}

  /** A panel: its y axis and its series. */
  record Panel(String yLabel, boolean logY, List<Series> series) {}

  /** A vertical line across every panel at {@code x}, labelled (e.g. where a curve saturated). */
  record Marker(double x, String label) {}

  /** The whole figure: a title and subtitle, the panels top to bottom, the x axis at the bottom. */
  static String render(
      String title,
      String subtitle,
      String xLabel,
      boolean logX,
      List<Panel> panels,
      Marker marker) {
    List<Double> xs = new ArrayList<>();
    panels.forEach(p -> p.series().forEach(s -> s.points().forEach(pt -> xs.add(pt[0]))));
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(axis(xLabel, logX, xs));
    plot.setGap(GAP);
    int color = 0;
    for (Panel panel : panels) {
      plot.add(panel(panel, logX, color, marker));
      color += panel.series().size();
    }
    JFreeChart chart = new JFreeChart(title, new Font(FONT, Font.BOLD, 16), plot, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.setPadding(new RectangleInsets(8, 8, 8, 24)); // room for the last x label
    TextTitle second = new TextTitle(subtitle, new Font(FONT, Font.PLAIN, 11));
    second.setPaint(Color.DARK_GRAY);
    chart.addSubtitle(second);
    LegendTitle legend = new LegendTitle(plot);
    legend.setPosition(RectangleEdge.TOP);
    legend.setItemFont(new Font(FONT, Font.PLAIN, 12));
    chart.addSubtitle(legend);
    int height = HEADER + panels.size() * (PANEL_HEIGHT + GAP) - GAP + FOOTER;
    SVGGraphics2D svg = new SVGGraphics2D(WIDTH, height);
    svg.setDefsKeyPrefix("plot"); // the same ids on every run: regenerated figures diff cleanly
    chart.draw(svg, new Rectangle(0, 0, WIDTH, height));
    return svg.getSVGElement(null, true, new ViewBox(0, 0, WIDTH, height), null, null) + "\n";
  }

  /** One panel: its series, coloured on from {@code firstColor}, over its own y axis. */
  private static XYPlot panel(Panel panel, boolean logX, int firstColor, Marker marker) {
    XYSeriesCollection data = new XYSeriesCollection();
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    List<Double> ys = new ArrayList<>();
    for (Series s : panel.series()) {
      XYSeries xy = new XYSeries(s.name(), false, true);
      for (double[] p : s.points()) {
        boolean drawable = drawable(p[0], logX) && drawable(p[1], panel.logY());
        xy.add(drawable ? p[0] : Double.NaN, drawable ? p[1] : Double.NaN); // NaN: a break
        ys.add(p[1]);
      }
      int i = data.getSeriesCount();
      data.addSeries(xy);
      renderer.setSeriesPaint(i, COLORS[(firstColor + i) % COLORS.length]);
      renderer.setSeriesStroke(i, s.dashed() ? DASHED : LINE);
      renderer.setSeriesShape(i, new Ellipse2D.Double(-3, -3, 6, 6));
    }
    XYPlot plot = new XYPlot(data, null, axis(panel.yLabel(), panel.logY(), ys), renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setOutlinePaint(Color.DARK_GRAY);
    plot.setOutlineStroke(THIN);
    plot.setDomainGridlinePaint(GRID);
    plot.setDomainGridlineStroke(THIN);
    plot.setRangeGridlinePaint(GRID);
    plot.setRangeGridlineStroke(THIN);
    // On a log axis, lines at 2..9 of each decade too.
    plot.setDomainMinorGridlinesVisible(logX);
    plot.setDomainMinorGridlinePaint(MINOR_GRID);
    plot.setDomainMinorGridlineStroke(THIN);
    plot.setRangeMinorGridlinesVisible(panel.logY());
    plot.setRangeMinorGridlinePaint(MINOR_GRID);
    plot.setRangeMinorGridlineStroke(THIN);
    if (marker != null && drawable(marker.x(), logX)) {
      plot.addDomainMarker(marker(marker));
    }
    return plot;
  }

  /** A log axis over whole decades, labelled at each, or a linear one from zero. */
  private static ValueAxis axis(String label, boolean log, List<Double> values) {
    Font font = new Font(FONT, Font.PLAIN, 12);
    if (log) {
      LogAxis axis = new DecadeAxis(label);
      Range range = decades(values);
      // A hair wider: log10(1e6) is 5.999…, and the decade's tick would fall outside.
      axis.setRange(range.getLowerBound() * (1 - 1e-9), range.getUpperBound() * (1 + 1e-9));
      axis.setTickUnit(new NumberTickUnit(1, LABELS, 9)); // 2..9 of a decade: minor gridlines
      axis.setTickLabelFont(font);
      axis.setLabelFont(font);
      return axis;
    }
    NumberAxis axis = new NumberAxis(label);
    axis.setAutoRangeIncludesZero(true);
    axis.setNumberFormatOverride(LABELS);
    axis.setTickLabelFont(font);
    axis.setLabelFont(font);
    return axis;
  }

  /**
   * The whole decades that hold every positive value (1..10 when none is): a log axis cut inside a
   * decade could show no labelled tick at all.
   */
  static Range decades(List<Double> values) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    for (double v : values) {
      if (drawable(v, true)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    if (hi == 0) {
      return new Range(1, 10);
    }
    double min = Math.pow(10, Math.floor(Math.log10(lo) + 1e-9));
    double max = Math.pow(10, Math.ceil(Math.log10(hi) - 1e-9));
    return new Range(min, max > min ? max : min * 10);
  }

  private static boolean drawable(double v, boolean log) {
    return Double.isFinite(v) && (!log || v > 0);
  }

  private static ValueMarker marker(Marker m) {
    ValueMarker marker = new ValueMarker(m.x(), MARKER, dashes(1, 2, 3));
    marker.setLabel(m.label());
    marker.setLabelFont(new Font(FONT, Font.PLAIN, 12));
    marker.setLabelPaint(MARKER);
    marker.setLabelBackgroundColor(new Color(255, 255, 255, 0));
    // At the bottom, left of the line, where rising latency lines are not.
    marker.setLabelAnchor(RectangleAnchor.BOTTOM_LEFT);
    marker.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
    return marker;
  }

  private static Stroke dashes(float width, float on, float off) {
    return new BasicStroke(
        width, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {on, off}, 0);
  }

  /** A tick label: {@code 0.5}, {@code 20}, {@code 1k}, {@code 2.5k}, {@code 1M}. */
  static String label(double v) {
    if (Math.abs(v) >= 1e6) {
      return trim(v / 1e6) + "M";
    }
    if (Math.abs(v) >= 1e3) {
      return trim(v / 1e3) + "k";
    }
    return trim(v);
  }

  private static String trim(double v) {
    String s = String.format(Locale.ROOT, "%.3f", v);
    s = s.replaceAll("0+$", "");
    s = s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    return s.equals("-0") ? "0" : s;
  }

  /**
   * A log axis whose tick labels are plain {@link #label}s: LogAxis's own are attributed strings,
   * which reach JFreeSVG as glyph outlines, not as text.
   */
  private static final class DecadeAxis extends LogAxis {
    private static final long serialVersionUID = 1L;

    DecadeAxis(String label) {
      super(label);
    }

    @Override
    public List<ValueTick> refreshTicks(
        Graphics2D g2, AxisState state, Rectangle2D area, RectangleEdge edge) {
      List<ValueTick> ticks = new ArrayList<>();
      for (Object o : super.refreshTicks(g2, state, area, edge)) {
        ValueTick t = (ValueTick) o;
        String text = t.getTickType() == TickType.MAJOR ? label(t.getValue()) : null;
        ticks.add(
            new NumberTick(
                t.getTickType(),
                t.getValue(),
                text,
                t.getTextAnchor(),
                t.getRotationAnchor(),
                t.getAngle()));
      }
      return ticks;
    }
  }

  /** {@link #label} as the axes' number format (formatting only). */
  private static final NumberFormat LABELS = new Labels();

  private static final class Labels extends NumberFormat {
    private static final long serialVersionUID = 1L;

    @Override
    public StringBuffer format(double v, StringBuffer to, FieldPosition pos) {
      return to.append(label(v));
    }

    @Override
    public StringBuffer format(long v, StringBuffer to, FieldPosition pos) {
      return to.append(label(v));
    }

    @Override
    public Number parse(String source, ParsePosition pos) {
      throw new UnsupportedOperationException("tick labels are not parsed");
    }
  }
}
