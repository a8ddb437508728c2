package io.outbox.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A line chart written as plain SVG text, for the bench's curves: one or more panels stacked over a
 * shared x axis (linear or log), each with its own y axis and a line per series. No plotting
 * library: the figures of docs/performance.md are made by the bench itself.
 */
final class SvgPlot {
  static final int WIDTH = 760;
  static final int PANEL_HEIGHT = 280;
  static final int LEFT = 80;
  static final int RIGHT = 30;
  static final int TOP = 64;
  static final int LEGEND = 28;
  static final int BOTTOM = 56;
  static final int GAP = 24;
  private static final String[] COLORS = {"#1f77b4", "#d62728", "#555555", "#2ca02c", "#9467bd"};

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

  /**
   * An axis's range and where its values go.
   *
   * @param log base-10 log scale ({@code min > 0}) or linear
   */
  record Scale(double min, double max, boolean log) {

    /** A log scale over whole decades that holds every positive value; 1..10 when none is. */
    static Scale logOf(List<Double> values) {
      double lo = Double.POSITIVE_INFINITY;
      double hi = 0;
      for (double v : values) {
        if (v > 0 && Double.isFinite(v)) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
      if (hi == 0) {
        return new Scale(1, 10, true);
      }
      double min = Math.pow(10, Math.floor(Math.log10(lo) + 1e-9));
      double max = Math.pow(10, Math.ceil(Math.log10(hi) - 1e-9));
      return new Scale(min, max > min ? max : min * 10, true);
    }

    /** A linear scale from 0 to a round value at or above every value; 0..1 when none is. */
    static Scale linearFromZero(List<Double> values) {
      double hi = 0;
      for (double v : values) {
        if (Double.isFinite(v)) {
          hi = Math.max(hi, v);
        }
      }
      if (hi == 0) {
        return new Scale(0, 1, false);
      }
      double step = niceStep(hi / 5);
      return new Scale(0, onStep(Math.ceil(hi / step - 1e-9), step), false);
    }

    /** Where {@code v} lies, 0 at {@code min} and 1 at {@code max}. */
    double fraction(double v) {
      return log
          ? (Math.log10(v) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
          : (v - min) / (max - min);
    }

    /** Whether {@code v} can be drawn on this scale. */
    boolean accepts(double v) {
      return Double.isFinite(v) && (!log || v > 0);
    }

    /**
     * Tick values: each decade on a log scale (with 2 and 5 between them when it spans at most two
     * decades), about five round steps on a linear one.
     */
    List<Double> ticks() {
      List<Double> ticks = new ArrayList<>();
      if (log) {
        int decades = (int) Math.round(Math.log10(max / min));
        double[] within = decades <= 2 ? new double[] {1, 2, 5} : new double[] {1};
        for (int d = 0; d <= decades; d++) {
          double decade = min * Math.pow(10, d);
          for (double m : within) {
            double v = Math.round(decade * m * 1e9) / 1e9;
            if (v <= max * (1 + 1e-9)) {
              ticks.add(v);
            }
          }
        }
      } else {
        double step = niceStep((max - min) / 5);
        for (long k = Math.round(min / step); k * step <= max + step * 1e-9; k++) {
          ticks.add(onStep(k, step));
        }
      }
      return ticks;
    }
  }

  /** {@code k * step} without the binary noise of a decimal step (3 x 0.1 is 0.3, not 0.300…04). */
  static double onStep(double k, double step) {
    int decimals = Math.max(0, (int) -Math.floor(Math.log10(step)));
    return Results.round(k * step, decimals);
  }

  /** The round step (1, 2 or 5 times a power of ten) at or above {@code raw}. */
  static double niceStep(double raw) {
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * power >= raw * (1 - 1e-9)) {
        return m * power;
      }
    }
    return 10 * power;
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
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }

  /** {@code text} safe inside an SVG element or a double-quoted attribute. */
  static String escape(String text) {
    StringBuilder b = new StringBuilder(text.length());
    for (char c : text.toCharArray()) {
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&apos;");
        default -> b.append(c);
      }
    }
    return b.toString();
  }

  /**
   * The SVG path of {@code points} in a plot area at {@code (left, top)} of {@code width x height}:
   * {@code M} starts a line, {@code L} continues it; a point the scales cannot draw breaks it.
   * Empty when no point can be drawn.
   */
  static String path(
      List<double[]> points,
      Scale x,
      Scale y,
      double left,
      double top,
      double width,
      double height) {
    StringBuilder d = new StringBuilder();
    boolean drawing = false;
    for (double[] p : points) {
      if (!x.accepts(p[0]) || !y.accepts(p[1])) {
        drawing = false;
        continue;
      }
      d.append(d.length() == 0 ? "" : " ").append(drawing ? "L" : "M");
      d.append(num(left + x.fraction(p[0]) * width))
          .append(' ')
          .append(num(top + (1 - y.fraction(p[1])) * height));
      drawing = true;
    }
    return d.toString();
  }

  private static String num(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

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
    Scale x = logX ? Scale.logOf(xs) : Scale.linearFromZero(xs);
    double plotWidth = WIDTH - LEFT - RIGHT;
    int height = TOP + panels.size() * (LEGEND + PANEL_HEIGHT + GAP) - GAP + BOTTOM;
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d"
                + " %d\" font-family=\"sans-serif\" font-size=\"12\">%n",
            WIDTH,
            height,
            WIDTH,
            height));
    svg.append(String.format("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n"));
    text(svg, LEFT, 24, "start", "font-size=\"16\" font-weight=\"bold\"", title);
    text(svg, LEFT, 44, "start", "fill=\"#555\" font-size=\"11\"", subtitle);
    int color = 0;
    double top = TOP;
    for (Panel panel : panels) {
      top += LEGEND;
      List<Double> ys = new ArrayList<>();
      panel.series().forEach(s -> s.points().forEach(pt -> ys.add(pt[1])));
      Scale y = panel.logY() ? Scale.logOf(ys) : Scale.linearFromZero(ys);
      axes(svg, x, y, top, plotWidth, panel.yLabel(), panel == panels.get(panels.size() - 1));
      double legendX = LEFT;
      for (Series s : panel.series()) {
        String stroke = COLORS[color++ % COLORS.length];
        String dash = s.dashed() ? " stroke-dasharray=\"6 4\"" : "";
        String d = path(s.points(), x, y, LEFT, top, plotWidth, PANEL_HEIGHT);
        if (!d.isEmpty()) {
          svg.append(
              String.format(
                  "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                  d, stroke, dash));
        }
        for (double[] p : s.points()) {
          if (x.accepts(p[0]) && y.accepts(p[1])) {
            svg.append(
                String.format(
                    "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>%n",
                    num(LEFT + x.fraction(p[0]) * plotWidth),
                    num(top + (1 - y.fraction(p[1])) * PANEL_HEIGHT),
                    stroke));
          }
        }
        double ly = top - LEGEND / 2.0;
        svg.append(
            String.format(
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                num(legendX), num(ly), num(legendX + 24), num(ly), stroke, dash));
        text(svg, legendX + 30, ly + 4, "start", "", s.name());
        legendX += 30 + 7 * s.name().length() + 24;
      }
      if (marker != null && x.accepts(marker.x())) {
        double mx = LEFT + x.fraction(marker.x()) * plotWidth;
        svg.append(
            String.format(
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e67e22\""
                    + " stroke-dasharray=\"2 3\"/>%n",
                num(mx), num(top), num(mx), num(top + PANEL_HEIGHT)));
        // At the bottom, where rising latency lines are not.
        text(svg, mx - 4, top + PANEL_HEIGHT - 8, "end", "fill=\"#e67e22\"", marker.label());
      }
      top += PANEL_HEIGHT + GAP;
    }
    text(svg, LEFT + plotWidth / 2, top - GAP + 40, "middle", "", xLabel);
    svg.append("</svg>\n");
    return svg.toString();
  }

  /** A panel's frame, grid, tick labels and y label; the x labels only under the last panel. */
  private static void axes(
      StringBuilder svg,
      Scale x,
      Scale y,
      double top,
      double plotWidth,
      String yLabel,
      boolean last) {
    double bottom = top + PANEL_HEIGHT;
    for (double t : y.ticks()) {
      double ty = top + (1 - y.fraction(t)) * PANEL_HEIGHT;
      grid(svg, LEFT, ty, LEFT + plotWidth, ty);
      text(svg, LEFT - 6, ty + 4, "end", "", label(t));
    }
    for (double t : x.ticks()) {
      double tx = LEFT + x.fraction(t) * plotWidth;
      grid(svg, tx, top, tx, bottom);
      if (last) {
        text(svg, tx, bottom + 16, "middle", "", label(t));
      }
    }
    svg.append(
        String.format(
            "<rect x=\"%d\" y=\"%s\" width=\"%s\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n",
            LEFT, num(top), num(plotWidth), PANEL_HEIGHT));
    double cy = top + PANEL_HEIGHT / 2.0;
    svg.append(
        String.format(
            "<text x=\"18\" y=\"%s\" text-anchor=\"middle\" transform=\"rotate(-90 18 %s)\">%s</text>%n",
            num(cy), num(cy), escape(yLabel)));
  }

  private static void grid(StringBuilder svg, double x1, double y1, double x2, double y2) {
    svg.append(
        String.format(
            "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#ddd\"/>%n",
            num(x1), num(y1), num(x2), num(y2)));
  }

  private static void text(
      StringBuilder svg, double x, double y, String anchor, String attributes, String content) {
    svg.append(
        String.format(
            "<text x=\"%s\" y=\"%s\" text-anchor=\"%s\"%s>%s</text>%n",
            num(x), num(y), anchor, attributes.isEmpty() ? "" : " " + attributes, escape(content)));
  }
}
