package io.outbox.sink.nats;

import static io.outbox.testkit.TestEvents.outcomes;
import static io.outbox.testkit.TestEvents.routed;
import static io.outbox.testkit.TestEvents.verdicts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.NatsTestSupport;
import io.outbox.testkit.PrivateNats;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the NATS sink adds to the contract, against real servers. */
class NatsSinkIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  @Test
  void aReSentEventIsStoredOnceWithinTheDuplicateWindow() throws Exception {
    NatsTestSupport nats = nats(Services.natsUrl());
    String stream = NatsTestSupport.unique("DEDUP");
    nats.createStream(stream, "outbox.dedup." + stream);
    Sink sink = sink(Services.natsUrl(), "");
    RoutedEvent event = routed("outbox.dedup." + stream, "k", "{}");

    assertThat(outcomes(sink, List.of(event))).containsExactly(Outcome.PUBLISHED);
    assertThat(outcomes(sink, List.of(event, routed("outbox.dedup." + stream, "k", "{}"))))
        .containsExactly(Outcome.PUBLISHED, Outcome.PUBLISHED);

    assertThat(nats.read(stream, 2, Duration.ofSeconds(5)))
        .extracting(d -> d.eventId())
        .hasSize(2)
        .startsWith(event.event().eventId().toString());
  }

  @Test
  void declaresItsStreamAndPublishesIntoIt() throws Exception {
    NatsTestSupport nats = nats(Services.natsUrl());
    String stream = NatsTestSupport.unique("DECLARED");
    Sink sink =
        sink(
            Services.natsUrl(),
            "stream { name = " + stream + ", subjects = [\"outbox.declared." + stream + ".>\"] }");
    try {
      assertThat(outcomes(sink, List.of(routed("outbox.declared." + stream + ".order", "k", "{}"))))
          .containsExactly(Outcome.PUBLISHED);
      assertThat(nats.read(stream, 1, Duration.ofSeconds(5))).hasSize(1);
    } finally {
      nats.deleteStream(stream);
    }
  }

  @Test
  void whatTheStreamCanNeverTakeIsPermanentAFullStreamIsUnavailable() throws Exception {
    String small = NatsTestSupport.unique("SMALL");
    String full = NatsTestSupport.unique("FULL");
    NatsTestSupport nats = nats(Services.natsUrl());
    nats.createStream(
        StreamConfiguration.builder()
            .name(small)
            .subjects("outbox.small." + small)
            .storageType(StorageType.Memory)
            .maximumMessageSize(64)
            .build());
    nats.createStream(
        StreamConfiguration.builder()
            .name(full)
            .subjects("outbox.full." + full)
            .storageType(StorageType.Memory)
            .maxMessages(1)
            .discardPolicy(DiscardPolicy.New)
            .build());
    Sink sink = sink(Services.natsUrl(), "");
    List<Verdict> verdicts =
        verdicts(
            sink,
            List.of(
                routed("outbox.small." + small, "a", "{\"big\":\"" + "x".repeat(200) + "\"}"),
                routed("outbox.full." + full, "b", "{}"),
                routed("outbox.full." + full, "c", "{}"),
                routed("bad subject", "d", "{}")));

    assertThat(verdicts)
        .extracting(Verdict::outcome)
        .containsExactly(
            Outcome.PERMANENT, Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE, Outcome.PERMANENT);
    assertThat(verdicts.get(0).error()).contains("10054");
    assertThat(verdicts.get(2).error()).contains("the stream cannot store now");
    assertThat(verdicts.get(3).error()).contains("bad subject");
  }

  @Test
  void aStoppedServerIsUnavailableAndTheSinkRecoversWhenItIsBack() throws Exception {
    PrivateNats server = teardown.add(PrivateNats.start());
    NatsTestSupport nats = nats(server.url());
    String stream = NatsTestSupport.unique("OUTAGE");
    nats.createStream(stream, "outbox.outage");
    Sink sink = sink(server.url(), "publish-timeout = 2s, connection-timeout = 1s");
    assertThat(outcomes(sink, List.of(routed("outbox.outage", "k", "{\"n\":1}"))))
        .containsExactly(Outcome.PUBLISHED);

    server.stop();
    long start = System.nanoTime();
    assertThat(outcomes(sink, List.of(routed("outbox.outage", "k", "{\"n\":2}"))))
        .containsExactly(Outcome.SINK_UNAVAILABLE);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(sink.probe(Duration.ofSeconds(1))).isFalse();

    server.restart();
    await().atMost(Duration.ofSeconds(20)).until(() -> sink.probe(Duration.ofSeconds(1)));
    assertThat(outcomes(sink, List.of(routed("outbox.outage", "k", "{\"n\":3}"))))
        .containsExactly(Outcome.PUBLISHED);
    assertThat(nats.read(stream, 2, Duration.ofSeconds(5))).hasSize(2);
  }

  private NatsTestSupport nats(String url) throws Exception {
    return teardown.add(NatsTestSupport.connect(url));
  }

  private Sink sink(String url, String hocon) {
    Sink sink =
        new NatsSinkProvider()
            .create(SinkContexts.context(NatsSinkProvider.TYPE, "url = \"" + url + "\"\n" + hocon));
    return teardown.add(sink);
  }
}
