package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.relay.spi.support.PendingBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Verdict bookkeeping of one confirm-mode channel, with the test playing the broker. */
class PublishChannelTest {

  private final FakeChannel fake = new FakeChannel();
  private final List<PendingBatch> finished = new ArrayList<>();
  private final List<String> missingExchanges = new ArrayList<>();
  private final List<Long> maxSizes = new ArrayList<>();
  private int refused;
  private int accepted;

  private PublishChannel channel(int window) throws Exception {
    return PublishChannel.open(
        fake.connection,
        window,
        new PublishChannel.Listener() {
          @Override
          public void missingExchange(String exchange) {
            missingExchanges.add(exchange);
          }

          @Override
          public void refused() {
            refused++;
          }

          @Override
          public void accepted() {
            accepted++;
          }

          @Override
          public void maxMessageSize(long bytes) {
            maxSizes.add(bytes);
          }
        });
  }

  private PendingBatch batch(String... exchanges) {
    List<RoutedEvent> events = new ArrayList<>();
    for (int i = 0; i < exchanges.length; i++) {
      events.add(Events.routed(exchanges[i], "o-" + i, "{}"));
    }
    return new PendingBatch(
        events,
        Ticker.SYSTEM.deadline(Duration.ofSeconds(60)),
        e -> "exchange '" + e.destination() + "'",
        finished::add);
  }

  /** A batch to exchange {@code ex} whose event {@code i} has a body of {@code sizes[i]} bytes. */
  private PendingBatch sized(int... sizes) {
    List<RoutedEvent> events = new ArrayList<>();
    for (int i = 0; i < sizes.length; i++) {
      events.add(Events.routed("ex", "o-" + i, "x".repeat(sizes[i])));
    }
    return new PendingBatch(
        events,
        Ticker.SYSTEM.deadline(Duration.ofSeconds(60)),
        e -> "exchange '" + e.destination() + "'",
        finished::add);
  }

  /**
   * Takes the batch's first turn, as its sender does (every event: each has a key of its own), and
   * publishes it in order; the tags are 1..n.
   */
  private static void publishAll(PublishChannel pc, PendingBatch batch) throws Exception {
    assertThat(batch.nextTurn()).hasSize(batch.events().size());
    for (int i = 0; i < batch.events().size(); i++) {
      RoutedEvent r = batch.events().get(i);
      assertThat(pc.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
      assertThat(
              pc.publish(
                  new PublishChannel.Entry(
                      batch,
                      i,
                      r.destination(),
                      "rk",
                      r.event().eventId().toString(),
                      r.event().payload().length),
                  RabbitMessages.properties(r),
                  r.event().payload()))
          .isTrue();
    }
  }

  private static List<Outcome> outcomes(PendingBatch batch) {
    List<Outcome> out = new ArrayList<>();
    for (int i = 0; i < batch.events().size(); i++) {
      Verdict v = batch.verdict(i);
      out.add(v == null ? null : v.outcome());
    }
    return out;
  }

  @Test
  void publishesMandatoryAndGivesVerdictsOnlyOnAcks() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "ex", "ex");
    publishAll(pc, batch);

    assertThat(fake.published).allSatisfy(p -> assertThat(p.mandatory()).isTrue());
    assertThat(outcomes(batch)).containsOnlyNulls();

    fake.ack(2, true); // multiple: 1 and 2
    assertThat(outcomes(batch)).containsExactly(Outcome.PUBLISHED, Outcome.PUBLISHED, null);
    assertThat(finished).isEmpty();
    fake.ack(3, false);
    assertThat(finished).containsExactly(batch);
    assertThat(outcomes(batch)).containsOnly(Outcome.PUBLISHED);
  }

  @Test
  void aReturnedMessageIsPermanentEvenThoughItsAckFollows() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "ex");
    publishAll(pc, batch);

    fake.returnMessage(1);
    fake.ack(2, true);

    assertThat(outcomes(batch)).containsExactly(Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(batch.verdict(0).error())
        .startsWith("unroutable: exchange 'ex' routing key 'rk'")
        .contains("312 NO_ROUTE");
  }

  @Test
  void aNackIsBackPressureSinkUnavailableForThatEventOnly() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "ex", "ex");
    publishAll(pc, batch);

    fake.ack(1, false);
    fake.nack(2, false);
    fake.ack(3, false);

    assertThat(outcomes(batch))
        .containsExactly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE, Outcome.PUBLISHED);
    assertThat(batch.verdict(1).error())
        .contains("exchange 'ex'")
        .contains("basic.nack")
        .contains("reject-publish");
    assertThat(refused).isEqualTo(1);
    assertThat(accepted).isEqualTo(2);
    assertThat(pc.isUsable()).as("a nack leaves the channel open").isTrue();
  }

  @Test
  void aMultipleNackRefusesEveryMessageUpToItsTag() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "ex", "ex");
    publishAll(pc, batch);

    fake.nack(2, true);

    assertThat(outcomes(batch))
        .containsExactly(Outcome.SINK_UNAVAILABLE, Outcome.SINK_UNAVAILABLE, null);
  }

  @Test
  void aMessageOverMaxMessageSizeIsPermanentAndTheOthersAreSentAgainUncharged() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = sized(10, 2000, 30, 40);
    publishAll(pc, batch);
    fake.ack(1, false);

    fake.closeByBroker(
        406, "PRECONDITION_FAILED - message size 2000 is larger than configured max size 1024");

    assertThat(outcomes(batch)).containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, null, null);
    assertThat(batch.verdict(1).error())
        .startsWith(
            "exchange 'ex': message body of 2000 bytes is larger than RabbitMQ's max_message_size"
                + " of 1024 bytes")
        .contains("406 PRECONDITION_FAILED");
    assertThat(batch.nextTurn()).as("sent back: their turn again").containsExactly(2, 3);
    assertThat(maxSizes).containsExactly(1024L);
  }

  @Test
  void theTooLargeMessageIsFoundByItsSizeAmongMessagesOfOtherBatches() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch first = sized(5000, 10);
    PendingBatch second = sized(20, 4000, 30);
    publishAll(pc, first);
    publishAll(pc, second);
    fake.ack(1, false);

    fake.closeByBroker(
        406, "PRECONDITION_FAILED - message size 4000 is larger than configured max size 4096");

    assertThat(outcomes(first)).containsExactly(Outcome.PUBLISHED, null);
    assertThat(outcomes(second)).containsExactly(null, Outcome.PERMANENT, null);
    assertThat(first.nextTurn()).as("sent back: their turn again").containsExactly(1);
    assertThat(second.nextTurn()).as("sent back: their turn again").containsExactly(0, 2);
  }

  @Test
  void aMissingExchangeFailsItsEventsAndSendsTheOthersBackInOrder() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "gone", "ex", "ex");
    publishAll(pc, batch);
    fake.ack(1, false);

    fake.closeByBroker(404, "NOT_FOUND - no exchange 'gone' in vhost '/'");

    assertThat(outcomes(batch)).containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, null, null);
    assertThat(batch.verdict(1).error()).startsWith("exchange 'gone' does not exist");
    assertThat(batch.nextTurn()).as("sent back: their turn again").containsExactly(2, 3);
    assertThat(missingExchanges).containsExactly("gone");
    assertThat(pc.isUsable()).isFalse();
    assertThat(pc.connectionLost()).isFalse();
  }

  @Test
  void aLostConnectionMakesEveryUnconfirmedMessageSinkUnavailable() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex", "ex", "ex");
    publishAll(pc, batch);
    fake.ack(1, false);

    fake.loseConnection();

    assertThat(outcomes(batch))
        .containsExactly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE, Outcome.SINK_UNAVAILABLE);
    assertThat(batch.verdict(1).error()).contains("connection to RabbitMQ lost");
    assertThat(batch.nextTurn()).as("nothing sent back").isEmpty();
    assertThat(pc.connectionLost()).isTrue();
  }

  @Test
  void anUnexplainedChannelErrorIsRetryableForTheUnconfirmed() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex");
    publishAll(pc, batch);

    fake.closeByBroker(406, "PRECONDITION_FAILED - something");

    Verdict v = batch.verdict(0);
    assertThat(v.outcome()).isEqualTo(Outcome.RETRYABLE);
    assertThat(v.error()).contains("406 PRECONDITION_FAILED");
  }

  @Test
  void theWindowBoundsUnconfirmedMessagesAndAcksFreeIt() throws Exception {
    PublishChannel pc = channel(2);
    PendingBatch batch = batch("ex", "ex");
    publishAll(pc, batch);

    assertThat(pc.acquire(Ticker.SYSTEM.deadline(Duration.ofMillis(20)))).isFalse();
    fake.ack(1, false);
    assertThat(pc.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
  }

  @Test
  void publishingOnAClosedChannelIsRefusedWithoutLosingTheEvent() throws Exception {
    PublishChannel pc = channel(10);
    PendingBatch batch = batch("ex");
    fake.closeByBroker(404, "NOT_FOUND - no exchange 'other' in vhost '/'");
    RoutedEvent r = batch.events().get(0);

    assertThat(pc.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
    boolean taken =
        pc.publish(
            new PublishChannel.Entry(
                batch, 0, "ex", "rk", r.event().eventId().toString(), r.event().payload().length),
            RabbitMessages.properties(r),
            r.event().payload());

    assertThat(taken).isFalse();
    assertThat(batch.verdict(0)).isNull(); // left to the sender, which sends it again elsewhere
    assertThat(pc.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue(); // the permit came back
  }
}
