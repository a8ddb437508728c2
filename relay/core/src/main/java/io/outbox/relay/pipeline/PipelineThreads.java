package io.outbox.relay.pipeline;

import java.util.Map;
import org.slf4j.MDC;

/**
 * Makes a pipeline's threads: names them {@code outbox-relay-<pipeline>[-<role>]} and sets their
 * logging context (SLF4J's MDC) to {@value #PIPELINE} (and {@value #LANE} for a lane), so that
 * every line logged on them carries the pipeline as a field, whoever logs it; and gives a thread
 * the pipelines share (the backlog reader, the daemon's stop) the context of the pipeline it works
 * for.
 */
final class PipelineThreads {
  /** The MDC key of the pipeline's name. */
  static final String PIPELINE = "pipeline";

  /** The MDC key of a lane's number. */
  static final String LANE = "lane";

  private PipelineThreads() {}

  /** The supervisor thread, {@code outbox-relay-<pipeline>}. */
  static Thread supervisor(String pipeline, Runnable body) {
    return thread("outbox-relay-" + pipeline, Map.of(PIPELINE, pipeline), body);
  }

  /** A lane's thread, {@code outbox-relay-<pipeline>-lane-<lane>}. */
  static Thread lane(String pipeline, int lane, Runnable body) {
    return thread(
        "outbox-relay-" + pipeline + "-lane-" + lane,
        Map.of(PIPELINE, pipeline, LANE, Integer.toString(lane)),
        body);
  }

  /** Another thread of the pipeline, {@code outbox-relay-<pipeline>-<role>}. */
  static Thread helper(String pipeline, String role, Runnable body) {
    return thread("outbox-relay-" + pipeline + "-" + role, Map.of(PIPELINE, pipeline), body);
  }

  /**
   * Runs {@code body} on the current thread, one the pipelines share, with {@code pipeline}'s
   * logging context, then gives the thread its own context back.
   */
  static void runAs(String pipeline, Runnable body) {
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

  private static Thread thread(String name, Map<String, String> context, Runnable body) {
    return new Thread(
        () -> {
          MDC.setContextMap(context);
          try {
            body.run();
          } finally {
            MDC.clear();
          }
        },
        name);
  }
}
