package io.outbox.sink.nats;

import static io.outbox.relay.spi.support.BatchPublisher.describe;

import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.BatchPublisher;
import io.outbox.relay.spi.support.InFlightWindow;
import io.outbox.relay.spi.support.PendingBatch;
import io.outbox.relay.spi.support.PublishingSink;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Publishes batches to NATS JetStream: a sender thread checks that a stream binds each subject,
 * then publishes the batch's messages asynchronously, turn by turn (a key's next event once the one
 * before was answered: {@link PendingBatch#nextTurn}), each with its event id as {@code
 * Nats-Msg-Id}, within a window of {@code max-pending} unacknowledged messages; each publish ack
 * yields its event's verdict ({@link PublishFailures}). A batch completes when every event has its
 * verdict or {@code publish-timeout} expired ({@link BatchPublisher}).
 */
final class NatsSink extends PublishingSink {

  private final JetStreamLink link;
  private final InFlightWindow window;

  /** Connects lazily, on the first publish or probe. */
  NatsSink(PluginContext context, NatsSinkSettings settings) {
    super(
        "NATS",
        context,
        settings.publishTimeout(),
        "publish-timeout",
        e -> "subject '" + e.destination() + "'");
    this.link = new JetStreamLink(context.pipeline(), settings);
    this.window = new InFlightWindow(settings.maxPending(), "max-pending");
  }

  /**
   * Publishes the events of one turn of the batch in order; failures found before a publish are
   * verdicts too.
   */
  @Override
  protected void send(PendingBatch batch, List<Integer> turn) throws InterruptedException {
    List<RoutedEvent> events = batch.events();
    Map<String, Verdict> subjects = new HashMap<>(); // per subject: null = bound, else its verdict
    JetStream js;
    try {
      js = link.jetStream();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      batch.failFrom(0, Verdict.unavailable("cannot connect to NATS: " + describe(e)));
      return;
    }
    for (int n = 0; n < turn.size(); n++) {
      int i = turn.get(n);
      if (batch.verdict(i) != null) {
        continue;
      }
      String subject = events.get(i).destination();
      try {
        if (!subjects.containsKey(subject)) {
          subjects.put(
              subject,
              link.bound(subject)
                  ? null
                  : Verdict.permanent(
                      "subject '" + subject + "': no JetStream stream binds this subject"));
        }
        if (subjects.get(subject) != null) {
          batch.complete(i, subjects.get(subject));
          continue;
        }
        Message message = NatsMessages.toMessage(events.get(i));
        PublishOptions options =
            PublishOptions.builder().messageId(events.get(i).event().eventId().toString()).build();
        window.send(batch, i, () -> js.publishAsync(message, options), e -> failed(e, subject));
      } catch (IllegalArgumentException e) {
        // An invalid subject or header, or a message over the server's max_payload.
        batch.complete(i, Verdict.permanent("subject '" + subject + "': " + describe(e)));
      } catch (IOException | JetStreamApiException | IllegalStateException e) {
        batch.failFrom(turn, n, batch.unavailable(i, describe(e)));
        return;
      }
    }
  }

  /** The verdict of a failed publish ack; a subject no stream answered for is checked again. */
  private Verdict failed(Throwable error, String subject) {
    PublishFailures.Failure f = PublishFailures.classify(error, subject);
    if (f.noStream()) {
      link.forget(subject); // checked again before the next publish to it
    }
    return f.verdict();
  }

  @Override
  protected boolean answers(Duration timeout)
      throws IOException, JetStreamApiException, InterruptedException {
    return link.answers();
  }

  @Override
  protected void closeClient(Duration left) {
    link.close();
  }

  /** {@inheritDoc} Here the NATS binding's: headers {@code ce-id}, ... */
  @Override
  public String cloudEventsHeaderPrefix() {
    return "ce-";
  }
}
