package io.outbox.relay.demo;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's consumer: reads what the relay published and notes each event's first arrival,
 * duplicates, and whether an order's events arrived in order. One subclass per broker.
 */
abstract class DemoConsumer implements AutoCloseable {
  private final Map<UUID, Long> firstSeen = new ConcurrentHashMap<>();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong orderViolations = new AtomicLong();
  private final Map<String, Boolean> createdSeen = new HashMap<>();

  /** Records one delivery; called from the consumer's single thread. */
  final void received(String eventId, String aggregateId, String eventType) {
    long now = System.nanoTime();
    if (eventId == null) {
      return;
    }
    UUID id = UUID.fromString(eventId);
    if (firstSeen.putIfAbsent(id, now) != null) {
      duplicates.incrementAndGet();
      return;
    }
    // OrderCreated must reach the consumer before OrderConfirmed of the same order.
    if ("OrderConfirmed".equals(eventType) && !createdSeen.containsKey(aggregateId)) {
      orderViolations.incrementAndGet();
    }
    createdSeen.put(aggregateId, Boolean.TRUE);
  }

  /** Forgets an event that is not part of the measured run (the warm-up). */
  void ignore(UUID id) {
    firstSeen.remove(id);
  }

  boolean receivedAll(Set<UUID> ids) {
    return firstSeen.keySet().containsAll(ids);
  }

  boolean has(UUID id) {
    return firstSeen.containsKey(id);
  }

  long firstSeenNanos(UUID id) {
    return firstSeen.get(id);
  }

  long distinct() {
    return firstSeen.size();
  }

  long duplicates() {
    return duplicates.get();
  }

  long orderViolations() {
    return orderViolations.get();
  }

  /** One read of a polling consumer: whether it found anything new. */
  @FunctionalInterface
  interface ReadStep {
    boolean read() throws Exception;
  }

  private volatile boolean stopped;
  private Thread reader;

  /**
   * Starts a thread that calls {@code step} until {@link #stopReading}, pausing a little when it
   * found nothing new and a little longer when the broker failed (it tries again).
   */
  final void startReading(String name, ReadStep step) {
    reader =
        new Thread(
            () -> {
              while (!stopped) {
                long pauseMillis;
                try {
                  pauseMillis = step.read() ? 0 : 20;
                } catch (InterruptedException e) {
                  return;
                } catch (Exception e) {
                  pauseMillis = 200; // the broker failed for a moment: try again
                }
                try {
                  Thread.sleep(pauseMillis);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            name);
    reader.setDaemon(true);
    reader.start();
  }

  /** Stops the thread of {@link #startReading}, waiting for it a moment. */
  final void stopReading() throws InterruptedException {
    stopped = true;
    if (reader != null) {
      reader.join(2000);
    }
  }

  @Override
  public abstract void close();
}
