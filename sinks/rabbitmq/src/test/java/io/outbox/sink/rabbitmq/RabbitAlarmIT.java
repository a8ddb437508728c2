package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.Rabbitmqctl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Raises a memory alarm on the shared RabbitMQ ({@code set_vm_memory_high_watermark 0}), which
 * makes the broker block every publishing connection and withhold confirms, and checks that the
 * sink turns that into sink-unavailable verdicts within {@code confirm-timeout} — never attempts or
 * dead letters, never a lane thread held — and publishes again once the alarm clears. The watermark
 * is always set back to what it was.
 */
// Exclusive: raises the shared RabbitMQ's memory alarm, which blocks every other publisher.
@Tag("exclusive")
class RabbitAlarmIT {

  @RegisterExtension final RabbitSinks rabbitmq = new RabbitSinks();
  private String watermark;

  private void raiseAlarm() throws Exception {
    watermark =
        Rabbitmqctl.run(
            Duration.ofSeconds(60), "eval", "vm_memory_monitor:get_vm_memory_high_watermark().");
    assertThat(watermark).as("the broker's memory watermark").matches("[0-9.]+");
    Rabbitmqctl.run(Duration.ofSeconds(60), "set_vm_memory_high_watermark", "0");
  }

  private void clearAlarm() throws Exception {
    if (watermark != null) {
      Rabbitmqctl.run(Duration.ofSeconds(60), "set_vm_memory_high_watermark", watermark);
      watermark = null;
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    clearAlarm();
  }

  private static List<RoutedEvent> batch(String exchange, int size, int payloadBytes) {
    String filler = "x".repeat(payloadBytes);
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      batch.add(
          Events.routed(exchange, "o-" + i % 20, "{\"n\":" + i + ",\"f\":\"" + filler + "\"}"));
    }
    return batch;
  }

  @Test
  void anAlarmMakesTheSinkUnavailableWithinConfirmTimeoutAndPublishingResumesAfterIt()
      throws Exception {
    try (RabbitAdmin admin = new RabbitAdmin()) {
      String exchange = admin.exchange(RabbitAdmin.unique("outbox.alarm.it"));
      String queue = admin.queue(RabbitAdmin.unique("q.alarm.it"), exchange, "#");
      Sink sink = rabbitmq.sink("confirm-timeout = 2s\nconnection-timeout = 2s");
      assertThat(RabbitSinkIT.publish(sink, batch(exchange, 10, 100)))
          .as("before the alarm")
          .allMatch(Verdict::isPublished);

      raiseAlarm();
      List<RoutedEvent> during = batch(exchange, 200, 100);
      long start = System.nanoTime();
      List<Verdict> verdicts = RabbitSinkIT.publish(sink, during);
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertThat(RabbitSinkIT.outcomes(verdicts))
          .as("a blocked broker is an outage, not the events' fault")
          .containsOnly(Outcome.SINK_UNAVAILABLE);
      assertThat(tookMs)
          .as("verdicts came by confirm-timeout (2 s), with slack")
          .isLessThan(20_000);
      assertThat(sink.probe(Duration.ofSeconds(3))).as("probe while the alarm is on").isFalse();

      clearAlarm();
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> sink.probe(Duration.ofSeconds(3)));
      // As the pipeline does after an outage: the same events again, with the same message ids.
      assertThat(RabbitSinkIT.publish(sink, during))
          .as("after the alarm")
          .allMatch(Verdict::isPublished);

      Set<String> expected = new HashSet<>();
      during.forEach(e -> expected.add(e.event().eventId().toString()));
      List<GetResponse> received = admin.read(queue, 10 + during.size(), Duration.ofSeconds(30));
      received.addAll(admin.drain(queue));
      Set<String> ids = new HashSet<>();
      received.forEach(r -> ids.add(r.getProps().getMessageId()));
      assertThat(ids).containsAll(expected);
    }
  }

  @Test
  void anAlarmRaisedMidStreamNeverHoldsThePublishingThreadBeyondConfirmTimeout() throws Exception {
    try (RabbitAdmin admin = new RabbitAdmin()) {
      String exchange = admin.exchange(RabbitAdmin.unique("outbox.alarm.big.it"));
      String queue = admin.queue(RabbitAdmin.unique("q.alarm.big.it"), exchange, "#");
      admin.deleteQueueLater(queue);
      Sink sink =
          rabbitmq.sink("confirm-timeout = 3s\nconnection-timeout = 2s\nmax-unconfirmed = 10000");
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong longestCallMs = new AtomicLong();
      AtomicInteger unavailableBatches = new AtomicInteger();
      AtomicInteger publishedAfterAlarm = new AtomicInteger();
      AtomicBoolean alarmCleared = new AtomicBoolean();
      ExecutorService lane = Executors.newSingleThreadExecutor();
      try {
        // 1 MB messages, published back to back: the alarm lands while writes are under way.
        Future<?> publisher =
            lane.submit(
                () -> {
                  while (!stop.get()) {
                    long start = System.nanoTime();
                    List<Verdict> verdicts =
                        sink.publish(batch(exchange, 8, 1024 * 1024))
                            .toCompletableFuture()
                            .get(60, TimeUnit.SECONDS);
                    longestCallMs.accumulateAndGet(
                        (System.nanoTime() - start) / 1_000_000, Math::max);
                    if (verdicts.stream().allMatch(Verdict::isPublished)) {
                      if (alarmCleared.get()) {
                        publishedAfterAlarm.incrementAndGet();
                      }
                    } else {
                      assertThat(RabbitSinkIT.outcomes(verdicts))
                          .isSubsetOf(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
                      unavailableBatches.incrementAndGet();
                      await()
                          .atMost(Duration.ofSeconds(120))
                          .pollInterval(Duration.ofMillis(200))
                          .until(() -> stop.get() || sink.probe(Duration.ofSeconds(2)));
                    }
                  }
                  return null;
                });
        await().atMost(Duration.ofSeconds(30)).until(() -> longestCallMs.get() > 0);
        raiseAlarm();
        await().atMost(Duration.ofSeconds(30)).until(() -> unavailableBatches.get() > 0);
        clearAlarm();
        alarmCleared.set(true);
        await().atMost(Duration.ofSeconds(60)).until(() -> publishedAfterAlarm.get() >= 3);
        stop.set(true);
        publisher.get(60, TimeUnit.SECONDS);
      } finally {
        stop.set(true);
        lane.shutdownNow();
      }
      assertThat(longestCallMs.get())
          .as("the longest publish, with confirm-timeout 3 s (slack for a loaded machine)")
          .isLessThan(20_000);
    }
  }

  @Test
  void aSinkBlockedMidWriteStillClosesWithinItsTimeout() throws Exception {
    try (RabbitAdmin admin = new RabbitAdmin()) {
      String exchange = admin.exchange(RabbitAdmin.unique("outbox.alarm.close.it"));
      String queue = admin.queue(RabbitAdmin.unique("q.alarm.close.it"), exchange, "#");
      admin.deleteQueueLater(queue);
      Sink sink =
          rabbitmq.sink("confirm-timeout = 3s\nconnection-timeout = 2s\nmax-unconfirmed = 10000");
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger unavailableBatches = new AtomicInteger();
      AtomicInteger batches = new AtomicInteger();
      ExecutorService lane = Executors.newSingleThreadExecutor();
      try {
        lane.submit(
            () -> {
              while (!stop.get()) {
                List<Verdict> verdicts =
                    sink.publish(batch(exchange, 8, 1024 * 1024))
                        .toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
                batches.incrementAndGet();
                if (!verdicts.stream().allMatch(Verdict::isPublished)) {
                  unavailableBatches.incrementAndGet();
                }
              }
              return null;
            });
        await().atMost(Duration.ofSeconds(30)).until(() -> batches.get() > 0);
        raiseAlarm();
        await().atMost(Duration.ofSeconds(30)).until(() -> unavailableBatches.get() > 0);
        stop.set(true);
        long start = System.nanoTime();
        sink.close(Duration.ofSeconds(2));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(tookMs)
            .as("close(2 s) of a sink the broker blocked (slack for a loaded machine)")
            .isLessThan(15_000);
      } finally {
        stop.set(true);
        lane.shutdownNow();
        clearAlarm();
      }
    }
  }
}
