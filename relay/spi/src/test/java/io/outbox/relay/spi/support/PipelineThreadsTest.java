package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class PipelineThreadsTest {

  @Test
  void aPipelineThreadLogsWithThePipelineAndKeepsItsName() throws Exception {
    Seen seen =
        run(body -> PipelineThreads.daemon("orders", "outbox-relay-orders-retention", body));

    assertThat(seen.context()).isEqualTo(Map.of("pipeline", "orders"));
    assertThat(seen.name()).isEqualTo("outbox-relay-orders-retention");
    assertThat(seen.daemon()).isTrue();
  }

  @Test
  void aLaneThreadLogsWithItsLaneToo() throws Exception {
    Seen seen = run(body -> PipelineThreads.lane("orders", 3, "outbox-relay-orders-lane-3", body));

    assertThat(seen.context()).isEqualTo(Map.of("pipeline", "orders", "lane", "3"));
  }

  @Test
  void threadFactoriesNumberTheirThreadsAndSetTheContextOnEach() throws Exception {
    ThreadFactory factory = PipelineThreads.daemons("orders", "outbox-relay-kafka-orders");
    ExecutorService executor = Executors.newFixedThreadPool(2, factory);
    try {
      AtomicReference<Map<String, String>> context = new AtomicReference<>();
      AtomicReference<String> name = new AtomicReference<>();
      executor
          .submit(
              () -> {
                context.set(MDC.getCopyOfContextMap());
                name.set(Thread.currentThread().getName());
              })
          .get(10, TimeUnit.SECONDS);
      assertThat(context.get()).isEqualTo(Map.of("pipeline", "orders"));
      assertThat(name.get()).isEqualTo("outbox-relay-kafka-orders-1");
    } finally {
      executor.shutdownNow();
    }
    Seen lane =
        run(
            PipelineThreads.laneDaemons("orders", 1, "outbox-relay-kafka-orders-lane-1")
                ::newThread);
    assertThat(lane.context()).isEqualTo(Map.of("pipeline", "orders", "lane", "1"));
    assertThat(lane.name()).isEqualTo("outbox-relay-kafka-orders-lane-1");
  }

  @Test
  void runAsGivesASharedThreadThePipelineThenItsOwnContextBack() {
    MDC.put("request", "r1");
    try {
      AtomicReference<Map<String, String>> inside = new AtomicReference<>();
      PipelineThreads.runAs("orders", () -> inside.set(MDC.getCopyOfContextMap()));

      assertThat(inside.get()).isEqualTo(Map.of("request", "r1", "pipeline", "orders"));
      assertThat(MDC.getCopyOfContextMap()).isEqualTo(Map.of("request", "r1"));
    } finally {
      MDC.clear();
    }
  }

  private record Seen(Map<String, String> context, String name, boolean daemon) {}

  /** Starts the thread {@code make} makes of a recording body, waits for it: what it saw. */
  private static Seen run(Function<Runnable, Thread> make) throws InterruptedException {
    AtomicReference<Seen> seen = new AtomicReference<>();
    Thread t = make.apply(() -> seen.set(now()));
    t.start();
    t.join(10_000);
    return seen.get();
  }

  private static Seen now() {
    Thread t = Thread.currentThread();
    return new Seen(
        Optional.ofNullable(MDC.getCopyOfContextMap()).orElse(Map.of()), t.getName(), t.isDaemon());
  }
}
