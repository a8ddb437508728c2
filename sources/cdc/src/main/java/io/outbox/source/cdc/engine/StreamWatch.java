package io.outbox.source.cdc.engine;

import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session's watch thread: stops the engine as soon as this instance no longer holds the lease
 * (before its lanes notice), and ends the session when the stream receives nothing, not even a
 * heartbeat, for {@link #stallTimeout}.
 */
final class StreamWatch implements Runnable {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);
  private static final long WATCH_EVERY_MILLIS = 100;
  private static final Duration MIN_STALL = Duration.ofSeconds(30);

  private final CdcSettings settings;
  private final CdcConnections connections;
  private final RecordHandoff handoff;
  private final BooleanSupplier owned;
  private final BooleanSupplier stopping;
  private final CountDownLatch ended;
  private final Consumer<String> abandon;
  private final String pipeline;

  /**
   * @param owned whether this instance still holds the lease (no I/O)
   * @param stopping whether the session is stopping
   * @param ended counted down when the engine ended
   * @param abandon ends the session for the reason given, and stops the engine
   */
  StreamWatch(
      CdcSettings settings,
      CdcConnections connections,
      RecordHandoff handoff,
      BooleanSupplier owned,
      BooleanSupplier stopping,
      CountDownLatch ended,
      Consumer<String> abandon,
      String pipeline) {
    this.settings = settings;
    this.connections = connections;
    this.handoff = handoff;
    this.owned = owned;
    this.stopping = stopping;
    this.ended = ended;
    this.abandon = abandon;
    this.pipeline = pipeline;
  }

  @Override
  public void run() {
    long stallNanos = stallTimeout(settings).toNanos();
    while (!stopping.getAsBoolean()) {
      try {
        TimeUnit.MILLISECONDS.sleep(WATCH_EVERY_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
      if (stopping.getAsBoolean() || ended.getCount() == 0) {
        return;
      }
      if (!owned.getAsBoolean()) {
        abandon.accept("this instance no longer holds the lease of slot " + settings.slotName());
        return;
      }
      long silent = handoff.silentNanos();
      if (!handoff.receiving() && silent > stallNanos) {
        String why =
            "the change stream received nothing, not even a heartbeat, for "
                + TimeUnit.NANOSECONDS.toMillis(silent)
                + " ms (heartbeat-interval "
                + settings.heartbeatInterval().toMillis()
                + " ms): "
                + new SlotHolder(connections, settings.slotName()).describe();
        log.error("pipeline {}: {}; restarting the stream", pipeline, why);
        abandon.accept(why);
        return;
      }
    }
  }

  /**
   * No progress for this long is a stuck stream: three heartbeats, at least 30 s (the engine may
   * take that long to decode a large transaction before it sends anything).
   */
  static Duration stallTimeout(CdcSettings settings) {
    Duration three = settings.heartbeatInterval().multipliedBy(3);
    return three.compareTo(MIN_STALL) > 0 ? three : MIN_STALL;
  }
}
