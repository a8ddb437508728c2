package io.outbox.source.cdc.engine;

import io.outbox.relay.spi.support.PipelineThreads;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The threads of a {@link StreamSession}, named after the pipeline and their role, daemons: the
 * session's own (offsets, sweep, catch-up, watch) are kept to be interrupted, in the order they
 * started, when the session stops.
 */
final class SessionThreads {

  private final String pipeline;
  private final List<Thread> own = new CopyOnWriteArrayList<>();

  SessionThreads(String pipeline) {
    this.pipeline = pipeline;
  }

  /** A daemon thread named {@code outbox-relay-<pipeline>-cdc-<role>}, not started. */
  Thread named(String role, Runnable body) {
    return PipelineThreads.daemon(pipeline, "outbox-relay-" + pipeline + "-cdc-" + role, body);
  }

  /** Starts one of the session's own threads. */
  void start(String role, Runnable body) {
    Thread t = named(role, body);
    own.add(t);
    t.start();
  }

  /**
   * Interrupts the session's own threads, but not the calling one (the watch stops the session from
   * its own thread).
   */
  void interrupt() {
    Thread current = Thread.currentThread();
    for (Thread t : own) {
      if (t != current) {
        t.interrupt();
      }
    }
  }
}
