package io.outbox.bench;

import org.HdrHistogram.Histogram;

/** The figures a bench run reports. */
final class Results {
  private Results() {}

  /**
   * CPU time and memory of a measured process.
   *
   * @param cpuSeconds CPU time of the whole process (start-up included) until the last event
   * @param drainCpuSeconds CPU time between the first and the last settled event
   * @param cpuSecondsPer10k {@code drainCpuSeconds} per 10,000 events settled in that window
   * @param peakRssMiB the process's peak resident set size (VmHWM), MiB
   * @param machineIdleShare the whole machine's idle share of CPU (0..1) over the same window as
   *     {@code drainCpuSeconds}, or null where it was not measured
   */
  record Footprint(
      double cpuSeconds,
      double drainCpuSeconds,
      double cpuSecondsPer10k,
      double peakRssMiB,
      Double machineIdleShare) {

    static Footprint between(ProcSample first, ProcSample last, long eventsBetween) {
      return between(first, last, eventsBetween, null, null);
    }

    /** With the machine's idle share between {@code machineFirst} and {@code machineLast}. */
    static Footprint between(
        ProcSample first,
        ProcSample last,
        long eventsBetween,
        MachineCpu machineFirst,
        MachineCpu machineLast) {
      double drain = last.cpuSeconds() - first.cpuSeconds();
      return new Footprint(
          round(last.cpuSeconds(), 2),
          round(drain, 2),
          round(eventsBetween == 0 ? 0 : drain * 10_000 / eventsBetween, 3),
          round(last.peakRssBytes() / (1024.0 * 1024.0), 1),
          machineFirst == null || machineLast == null
              ? null
              : round(machineLast.idleShareSince(machineFirst), 3));
    }
  }

  /**
   * A throughput figure.
   *
   * @param name e.g. {@code relay polling->kafka mark}, {@code raw kafka}
   * @param measures what the figure measures, in words
   * @param events events counted
   * @param seconds the time they took
   * @param eventsPerSecond {@code events / seconds}
   * @param withStartupPerSecond all events divided by the time from process launch (start-up and
   *     first connections included); 0 where it does not apply
   * @param footprint the process's CPU and memory, or null for in-process baselines
   */
  record Throughput(
      String name,
      String measures,
      long events,
      double seconds,
      double eventsPerSecond,
      double withStartupPerSecond,
      Footprint footprint) {

    static Throughput of(String name, String measures, long events, long nanos) {
      return of(name, measures, events, nanos, 0, null);
    }

    static Throughput of(
        String name,
        String measures,
        long events,
        long nanos,
        double withStartupPerSecond,
        Footprint footprint) {
      double seconds = nanos / 1e9;
      return new Throughput(
          name,
          measures,
          events,
          round(seconds, 3),
          round(events / seconds, 0),
          round(withStartupPerSecond, 0),
          footprint);
    }
  }

  /**
   * What a streamed CDC drain ({@code --cdc-backlog streamed}) shows beside its figure: the
   * backlog's insertion, which ran while the relay streamed, and the part of the drain after it.
   *
   * @param insertSeconds from the insertion's first row to its last commit
   * @param insertEventsPerSecond the backlog's events over {@code insertSeconds}
   * @param drainEndAfterInsertSeconds from the insertion's last commit to the sample that saw no
   *     row pending
   * @param insertBound whether the drain ended within {@link #INSERT_BOUND_SHARE} of the
   *     insertion's time after it (or within two samples): the relay kept up with the insertion, so
   *     its figure is the insertion's rate, not the relay's limit
   * @param pendingAtInsertEnd rows pending at the first sample after the last commit
   * @param afterInsertEventsPerSecond those rows over the time from that sample to the drain's end:
   *     the stream with the whole backlog in the WAL and the insertion no longer on the machine;
   *     null when none was pending
   * @param afterInsertCpuSecondsPer10k the relay's CPU over the same window, per 10,000 of them
   * @param afterInsertMachineIdleShare the machine's idle share over the same window
   */
  record Streamed(
      double insertSeconds,
      double insertEventsPerSecond,
      double drainEndAfterInsertSeconds,
      boolean insertBound,
      long pendingAtInsertEnd,
      Double afterInsertEventsPerSecond,
      Double afterInsertCpuSecondsPer10k,
      Double afterInsertMachineIdleShare) {

    /** A drain that ends within this share of the insertion's time after it kept up with it. */
    static final double INSERT_BOUND_SHARE = 0.1;
  }

  /**
   * A latency distribution, in milliseconds.
   *
   * @param name e.g. {@code commit-to-consumer-receive}
   * @param measures what the figure measures, in words
   */
  record Latency(
      String name,
      String measures,
      long count,
      double p50,
      double p90,
      double p99,
      double max,
      long missing) {

    /** From a histogram of microseconds. */
    static Latency of(String name, String measures, Histogram micros, long missing) {
      return new Latency(
          name,
          measures,
          micros.getTotalCount(),
          ms(micros.getValueAtPercentile(50)),
          ms(micros.getValueAtPercentile(90)),
          ms(micros.getValueAtPercentile(99)),
          ms(micros.getMaxValue()),
          missing);
    }

    private static double ms(long micros) {
      return round(micros / 1000.0, 2);
    }
  }

  /**
   * The load of a latency run, beside its distributions: whether the writers reached the rate,
   * whether the relay kept up, and how busy the machine was.
   *
   * @param name {@code latency}, or {@code latency <delivery>}
   * @param requested events/s asked of the writers
   * @param achieved events/s they committed
   * @param pendingAtEnd events pending when the writers stopped
   * @param machineIdleShare the machine's idle share of CPU over the run (0..1), or null where the
   *     platform gives no CPU ticks ({@link MachineCpu})
   */
  record Load(
      String name, int requested, double achieved, long pendingAtEnd, Double machineIdleShare) {}

  static double round(double value, int decimals) {
    double scale = Math.pow(10, decimals);
    return Math.round(value * scale) / scale;
  }
}
