package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.PrivateRabbit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A private RabbitMQ node with {@code max_message_size = 1 MiB}: a bigger message makes the broker
 * close the channel with 406 PRECONDITION_FAILED. Only that event is permanent; the channel's other
 * unconfirmed messages, of its batch and of other lanes' batches, are sent again and published,
 * none charged; once the sink knows the limit it refuses such an event before sending it.
 */
class RabbitMaxMessageSizeIT {

  private static final int MAX = 1024 * 1024;

  private static PrivateRabbit rabbit;

  @RegisterExtension
  final RabbitSinks rabbitmq =
      new RabbitSinks(
          () -> rabbit.uri("127.0.0.1"),
          () -> {
            ConnectionFactory f = new ConnectionFactory();
            f.setUri(rabbit.uri("127.0.0.1"));
            f.setAutomaticRecoveryEnabled(false);
            return new RabbitAdmin(f);
          });

  @BeforeAll
  static void startBroker() {
    rabbit = PrivateRabbit.startPlain(List.of("max_message_size = " + MAX));
  }

  @AfterAll
  static void stopBroker() {
    if (rabbit != null) {
      rabbit.close();
    }
  }

  private static RoutedEvent sized(String exchange, String key, int bytes) {
    return Events.routed(exchange, key, "\"" + "x".repeat(bytes - 2) + "\"");
  }

  private static List<Outcome> expected(int size, int permanentAt) {
    List<Outcome> out = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      out.add(i == permanentAt ? Outcome.PERMANENT : Outcome.PUBLISHED);
    }
    return out;
  }

  /**
   * With one channel, lane B's messages may be unconfirmed on the channel the broker closes for
   * lane A's event; with two, lane B usually has a channel of its own. Either way B loses nothing.
   */
  @ParameterizedTest(name = "channels = {0}")
  @ValueSource(ints = {1, 2})
  void aMessageOverMaxMessageSizeIsPermanentForItselfOnlyAndNothingElseIsCharged(int channels)
      throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.size.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.size.it"), exchange, "#");
    Sink sink = rabbitmq.sink("channels = " + channels + "\nconfirm-timeout = 20s");
    // Lane A: small events around one of 2 MiB, its key's later events too. Lane B meanwhile:
    // small events only.
    List<RoutedEvent> laneA = new ArrayList<>();
    for (int i = 0; i < 41; i++) {
      laneA.add(i == 20 ? sized(exchange, "a-0", 2 * MAX) : sized(exchange, "a-" + i % 4, 2000));
    }
    List<RoutedEvent> laneB = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      laneB.add(sized(exchange, "b-" + i % 7, 2000));
    }

    CompletableFuture<List<Verdict>> a = sink.publish(laneA).toCompletableFuture();
    CompletableFuture<List<Verdict>> b = sink.publish(laneB).toCompletableFuture();
    List<Verdict> va = a.get(60, TimeUnit.SECONDS);
    List<Verdict> vb = b.get(60, TimeUnit.SECONDS);

    assertThat(RabbitSinkIT.outcomes(va)).containsExactlyElementsOf(expected(laneA.size(), 20));
    assertThat(va.get(20).error())
        .isEqualTo(
            "exchange '"
                + exchange
                + "': message body of "
                + 2 * MAX
                + " bytes is larger than RabbitMQ's max_message_size of "
                + MAX
                + " bytes (406 PRECONDITION_FAILED - message size "
                + 2 * MAX
                + " is larger than configured max size "
                + MAX
                + ")");
    assertThat(RabbitSinkIT.outcomes(vb)).containsOnly(Outcome.PUBLISHED);

    Set<String> expected = new HashSet<>();
    laneA.stream()
        .filter(r -> r != laneA.get(20))
        .forEach(r -> expected.add(r.event().eventId().toString()));
    laneB.forEach(r -> expected.add(r.event().eventId().toString()));
    List<GetResponse> received =
        rabbitmq.admin().read(queue, expected.size(), Duration.ofSeconds(30));
    received.addAll(rabbitmq.admin().drain(queue));
    Set<String> ids = new HashSet<>();
    received.forEach(r -> ids.add(r.getProps().getMessageId()));
    assertThat(ids).isEqualTo(expected); // sent again: duplicates share the message_id

    // Now the sink knows the limit: a big event fails before it is sent, the channel stays.
    List<RoutedEvent> again =
        List.of(
            sized(exchange, "c-1", 100),
            sized(exchange, "c-2", MAX + 1),
            sized(exchange, "c-3", 100));
    List<Verdict> vc = RabbitSinkIT.publish(sink, again);
    assertThat(RabbitSinkIT.outcomes(vc)).containsExactlyElementsOf(expected(3, 1));
    assertThat(vc.get(1).error())
        .isEqualTo(
            "exchange '"
                + exchange
                + "': message body of "
                + (MAX + 1)
                + " bytes is larger than RabbitMQ's max_message_size of "
                + MAX
                + " bytes");
    assertThat(rabbitmq.admin().read(queue, 2, Duration.ofSeconds(10))).hasSize(2);
  }

  @Test
  void aMessageJustUnderTheLimitIsPublished() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.size.ok.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.size.ok.it"), exchange, "#");
    Sink sink = rabbitmq.sink("");

    assertThat(RabbitSinkIT.publish(sink, List.of(sized(exchange, "o-1", MAX))))
        .allMatch(Verdict::isPublished);
    assertThat(rabbitmq.admin().read(queue, 1, Duration.ofSeconds(10)).get(0).getBody())
        .hasSize(MAX);
  }
}
