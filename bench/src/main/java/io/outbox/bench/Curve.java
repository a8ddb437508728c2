package io.outbox.bench;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * A curve of the bench ({@code --curve}): the figures of one bench run per point, against the rate
 * of the latency run ({@code rate}) or against the backlog of the drain ({@code backlog}); when a
 * rate curve saturated; its table and its SVG plot.
 */
final class Curve {
  /** The writers saturated when they committed less than this share of the rate asked for. */
  static final double ACHIEVED_SHARE = 0.9;

  /** The relay fell behind when more than this many seconds of the rate were pending at the end. */
  static final double PENDING_SECONDS = 1.0;

  private Curve() {}

  /**
   * One point: the figures a bench run gave at {@code x}, null where the run had none.
   *
   * @param x the rate asked for (events/s) or the backlog (events)
   * @param run the point's run id (its database, topic and work directory)
   * @param drainEventsPerSecond the relay's drain
   * @param drainCpuSecondsPer10k the relay's CPU over the drain, per 10,000 events
   * @param peakRssMiB the relay's peak RSS over the drain
   * @param achieved events/s the latency run's writers committed
   * @param pendingAtEnd events pending when the latency run's writers stopped
   * @param ackP50 commit-to-ack p50, ms
   * @param ackP99 commit-to-ack p99, ms
   * @param receiveP99 commit-to-consumer-receive p99, ms
   * @param rawP99 the bare producer's send-to-ack p99 at the same rate, ms (Kafka)
   * @param machineIdleShare the machine's idle share over the latency run, else over the drain,
   *     else over the whole point
   * @param saturation why the relay or the writers could not keep up at this point; null when they
   *     could (always null on a backlog curve)
   */
  record Point(
      long x,
      String run,
      Double drainEventsPerSecond,
      Double drainCpuSecondsPer10k,
      Double peakRssMiB,
      Double achieved,
      Long pendingAtEnd,
      Double ackP50,
      Double ackP99,
      Double receiveP99,
      Double rawP99,
      Double machineIdleShare,
      String saturation) {

    /**
     * The figures of {@code report}, a run at {@code x}; {@code idleShare}, the machine's over the
     * whole run, where neither its latency run nor its drain measured one.
     */
    static Point of(long x, String run, Report report, Double idleShare) {
      Results.Throughput drain =
          report.throughput.stream()
              .filter(t -> t.name().startsWith("relay "))
              .findFirst()
              .orElse(null);
      Results.Footprint f = drain == null ? null : drain.footprint();
      Results.Load load = report.loads.isEmpty() ? null : report.loads.get(0);
      Results.Latency ack = latency(report, "commit-to-ack");
      Results.Latency receive = latency(report, "commit-to-consumer-receive");
      Results.Latency raw = latency(report, "raw ");
      String saturation = null;
      if (load != null) {
        Results.Latency settled = ack != null ? ack : receive;
        saturation =
            Curve.saturation(
                load.requested(),
                load.achieved(),
                load.pendingAtEnd(),
                settled == null ? 0 : settled.missing());
      }
      return new Point(
          x,
          run,
          drain == null ? null : drain.eventsPerSecond(),
          f == null ? null : f.cpuSecondsPer10k(),
          f == null ? null : f.peakRssMiB(),
          load == null ? null : load.achieved(),
          load == null ? null : load.pendingAtEnd(),
          ack == null ? null : ack.p50(),
          ack == null ? null : ack.p99(),
          receive == null ? null : receive.p99(),
          raw == null ? null : raw.p99(),
          idle(load, f, idleShare),
          saturation);
    }

    /** The latency run's idle share, else the drain's, else the whole point's. */
    private static Double idle(Results.Load load, Results.Footprint drain, Double point) {
      if (load != null && load.machineIdleShare() != null) {
        return load.machineIdleShare();
      }
      return drain != null && drain.machineIdleShare() != null ? drain.machineIdleShare() : point;
    }

    private static Results.Latency latency(Report report, String prefix) {
      return report.latency.stream()
          .filter(l -> l.name().startsWith(prefix))
          .findFirst()
          .orElse(null);
    }
  }

  /**
   * Why a latency run at {@code requested} events/s saturated, or null when it did not: the writers
   * committed less than {@link #ACHIEVED_SHARE} of the rate (the database's commit rate, or the
   * machine, is the limit), more than {@link #PENDING_SECONDS} of the rate was still pending when
   * they stopped (the relay fell behind: its backlog grew), or events were never acknowledged.
   */
  static String saturation(int requested, double achieved, long pendingAtEnd, long missing) {
    List<String> why = new ArrayList<>();
    if (achieved < ACHIEVED_SHARE * requested) {
      why.add(
          String.format(
              Locale.ROOT,
              "the writers reached %.0f of the %d events/s (< %.0f %%)",
              achieved,
              requested,
              ACHIEVED_SHARE * 100));
    }
    if (pendingAtEnd > PENDING_SECONDS * requested) {
      why.add(
          String.format(
              Locale.ROOT,
              "the relay fell behind: %d events pending when the writers stopped (> %.0f s of the"
                  + " rate)",
              pendingAtEnd,
              PENDING_SECONDS));
    }
    if (missing > 0) {
      why.add("the relay fell behind: " + missing + " events never acknowledged");
    }
    return why.isEmpty() ? null : String.join("; ", why);
  }

  /** Prints the points as a table. */
  static void print(PrintWriter out, String kind, String path, List<Point> points) {
    out.println();
    if (kind.equals("rate")) {
      out.printf("rate curve, %s (latency in ms; pending: when the writers stopped)%n", path);
      out.printf(
          "%10s %9s %8s %9s %9s %9s %9s %7s  %s%n",
          "events/s",
          "achieved",
          "pending",
          "ack p50",
          "ack p99",
          "recv p99",
          "raw p99",
          "idle %",
          "saturation");
      for (Point p : points) {
        out.printf(
            "%10d %9s %8s %9s %9s %9s %9s %7s  %s%n",
            p.x(),
            fmt(p.achieved(), "%.0f"),
            p.pendingAtEnd() == null ? "-" : p.pendingAtEnd().toString(),
            fmt(p.ackP50(), "%.1f"),
            fmt(p.ackP99(), "%.1f"),
            fmt(p.receiveP99(), "%.1f"),
            fmt(p.rawP99(), "%.1f"),
            fmt(p.machineIdleShare() == null ? null : p.machineIdleShare() * 100, "%.0f"),
            p.saturation() == null ? "-" : p.saturation());
      }
    } else {
      out.printf("backlog curve, %s (the relay's drain)%n", path);
      out.printf(
          "%10s %10s %10s %10s %7s%n", "backlog", "events/s", "cpu s/10k", "peak RSS", "idle %");
      for (Point p : points) {
        out.printf(
            "%10d %10s %10s %10s %7s%n",
            p.x(),
            fmt(p.drainEventsPerSecond(), "%.0f"),
            fmt(p.drainCpuSecondsPer10k(), "%.3f"),
            fmt(p.peakRssMiB(), "%.0f MiB"),
            fmt(p.machineIdleShare() == null ? null : p.machineIdleShare() * 100, "%.0f"));
      }
    }
    out.flush();
  }

  private static String fmt(Double v, String format) {
    return v == null ? "-" : String.format(Locale.ROOT, format, v);
  }

  /**
   * The plot: for {@code rate}, commit-to-ack p50 and p99 with the bare producer's p99 as a dashed
   * reference, a log y axis, a marker where the curve saturated; for {@code backlog}, the drain's
   * events/s above its CPU s per 10,000 events.
   */
  static String svg(String kind, String path, String subtitle, List<Point> points) {
    if (kind.equals("rate")) {
      List<SvgPlot.Series> series = new ArrayList<>();
      series.add(series("relay commit-to-ack p50", points, Point::ackP50, false));
      series.add(series("relay commit-to-ack p99", points, Point::ackP99, false));
      if (points.stream().anyMatch(p -> p.rawP99() != null)) {
        series.add(series("bare producer send-to-ack p99", points, Point::rawP99, true));
      }
      SvgPlot.Marker marker =
          points.stream()
              .filter(p -> p.saturation() != null)
              .findFirst()
              .map(p -> new SvgPlot.Marker(p.x(), "saturated at " + SvgPlot.label(p.x()) + "/s"))
              .orElse(null);
      return SvgPlot.render(
          path + ": commit-to-ack latency against the rate",
          subtitle,
          "events/s asked of the writers (log scale)",
          true,
          List.of(new SvgPlot.Panel("latency, ms (log scale)", true, series)),
          marker);
    }
    return SvgPlot.render(
        path + ": drain against the backlog",
        subtitle,
        "backlog, events (log scale)",
        true,
        List.of(
            new SvgPlot.Panel(
                "events settled per second",
                false,
                List.of(series("relay drain", points, Point::drainEventsPerSecond, false))),
            new SvgPlot.Panel(
                "relay CPU s per 10,000 events",
                false,
                List.of(series("relay CPU (drain)", points, Point::drainCpuSecondsPer10k, false)))),
        null);
  }

  private static SvgPlot.Series series(
      String name, List<Point> points, Function<Point, Double> y, boolean dashed) {
    List<double[]> xy = new ArrayList<>();
    for (Point p : points) {
      Double v = y.apply(p);
      xy.add(new double[] {p.x(), v == null ? Double.NaN : v});
    }
    return new SvgPlot.Series(name, xy, dashed);
  }
}
