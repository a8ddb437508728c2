package io.outbox.relay.spi.support;

import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.MDC;

/**
 * Makes every thread a pipeline's code starts, in the core and in the plug-ins: named as the caller
 * says ({@code outbox-relay-<pipeline>-...}) and with its logging context (SLF4J's MDC) set to
 * {@value #PIPELINE} (and {@value #LANE} for a lane's thread), so that every line logged on it
 * carries the pipeline as a field, whoever logs it; and gives a thread the pipelines share (the
 * backlog reader, the daemon's stop) the context of the pipeline it works for. {@code
 * ThreadOwnersTest} keeps other classes of the pipeline's code from making threads themselves.
 */
public final class PipelineThreads {
  /** The MDC key of the pipeline's name. */
  public static final String PIPELINE = "pipeline";

  /** The MDC key of a lane's number. */
  public static final String LANE = "lane";

  private PipelineThreads() {}

  /**
   * A thread of the pipeline named {@code name}, not started; a daemon when the calling thread is
   * one (as {@code new Thread} makes it).
   */
  public static Thread thread(String pipeline, String name, Runnable body) {
    return thread(Map.of(PIPELINE, pipeline), name, body, Thread.currentThread().isDaemon());
  }

  /** A daemon thread of the pipeline named {@code name}, not started. */
  public static Thread daemon(String pipeline, String name, Runnable body) {
    return thread(Map.of(PIPELINE, pipeline), name, body, true);
  }

  /** A thread of the pipeline's lane {@code lane} named {@code name}, as {@link #thread}. */
  public static Thread lane(String pipeline, int lane, String name, Runnable body) {
    return thread(laneContext(pipeline, lane), name, body, Thread.currentThread().isDaemon());
  }

  /** Daemon threads of the pipeline, named {@code <prefix>-1}, {@code <prefix>-2}... */
  public static ThreadFactory daemons(String pipeline, String prefix) {
    AtomicInteger n = new AtomicInteger();
    Map<String, String> context = Map.of(PIPELINE, pipeline);
    return r -> thread(context, prefix + "-" + n.incrementAndGet(), r, true);
  }

  /** Daemon threads of the pipeline's lane {@code lane}, each named {@code name}. */
  public static ThreadFactory laneDaemons(String pipeline, int lane, String name) {
    Map<String, String> context = laneContext(pipeline, lane);
    return r -> thread(context, name, r, true);
  }

  /** Daemon threads of the pipeline, each named {@code name}. */
  public static ThreadFactory namedDaemons(String pipeline, String name) {
    Map<String, String> context = Map.of(PIPELINE, pipeline);
    return r -> thread(context, name, r, true);
  }

  /**
   * Runs {@code body} on the current thread, one the pipelines share, with {@code pipeline}'s
   * logging context, then gives the thread its own context back.
   */
  public static void runAs(String pipeline, Runnable body) {
    Map<String, String> before = MDC.getCopyOfContextMap();
    MDC.put(PIPELINE, pipeline);
    try {
      body.run();
    } finally {
      if (before == null) {
        MDC.clear();
      } else {
        MDC.setContextMap(before);
      }
    }
  }

  private static Map<String, String> laneContext(String pipeline, int lane) {
    return Map.of(PIPELINE, pipeline, LANE, Integer.toString(lane));
  }

  private static Thread thread(
      Map<String, String> context, String name, Runnable body, boolean daemon) {
    Thread t =
        new Thread(
            () -> {
              MDC.setContextMap(context);
              try {
                body.run();
              } finally {
                MDC.clear();
              }
            },
            name);
    t.setDaemon(daemon);
    return t;
  }
}
