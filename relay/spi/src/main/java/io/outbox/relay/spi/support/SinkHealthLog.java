package io.outbox.relay.spi.support;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.util.List;
import org.slf4j.Logger;

/**
 * What every sink logs about its batches: one warning per batch with failures (counts, the first
 * error, the first event ids; never payloads), and, at debug level, one line each time the broker
 * becomes unreachable or reachable again (the pipeline logs the outage and the recovery itself, one
 * line each, whatever the sink).
 */
public final class SinkHealthLog {
  /** Most event ids named in one log line about a failed batch. */
  private static final int LOGGED_IDS = 20;

  private final Logger log;
  private final String broker;
  private final String pipeline;
  private volatile boolean reachable = true;

  /**
   * @param log the sink's own logger
   * @param broker the broker's name in messages, e.g. {@code Kafka}
   * @param pipeline the pipeline name
   */
  public SinkHealthLog(Logger log, String broker, String pipeline) {
    this.log = log;
    this.broker = broker;
    this.pipeline = pipeline;
  }

  /** Logs the outcome of a batch; {@code verdicts} are in the order of {@code events}. */
  public void batch(List<RoutedEvent> events, List<Verdict> verdicts) {
    int unavailable = 0;
    int retryable = 0;
    int permanent = 0;
    String firstError = null;
    StringBuilder ids = new StringBuilder();
    int named = 0;
    for (int i = 0; i < verdicts.size(); i++) {
      Verdict v = verdicts.get(i);
      switch (v.outcome()) {
        case PUBLISHED -> {
          continue;
        }
        case SINK_UNAVAILABLE -> unavailable++;
        case RETRYABLE -> retryable++;
        case PERMANENT -> permanent++;
      }
      if (firstError == null) {
        firstError = v.error();
      }
      if (named++ < LOGGED_IDS) {
        ids.append(named == 1 ? "" : ",").append(events.get(i).event().eventId());
      }
    }
    int published = verdicts.size() - unavailable - retryable - permanent;
    if (unavailable > 0 && reachable) {
      reachable = false;
      log.debug("{} unavailable for pipeline {}: {}", broker, pipeline, firstError);
    } else if (unavailable == 0 && published > 0 && !reachable) {
      reachable = true;
      log.debug("{} reachable again for pipeline {}", broker, pipeline);
    }
    if (named > 0) {
      log.warn(
          "{} batch of pipeline {}: {} published, {} unavailable, {} retryable, {} permanent;"
              + " first error: {}; event ids: {}{}",
          broker,
          pipeline,
          published,
          unavailable,
          retryable,
          permanent,
          firstError,
          ids,
          named > LOGGED_IDS ? ",..." : "");
    }
  }

  /** Notes a successful probe: logs the recovery if the broker was unreachable. */
  public void probeAnswered() {
    if (!reachable) {
      reachable = true;
      log.debug("{} reachable again for pipeline {} (probe)", broker, pipeline);
    }
  }
}
