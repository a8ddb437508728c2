package io.outbox.sink.nats;

import static io.outbox.relay.spi.support.BatchPublisher.describe;

import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
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
import java.util.concurrent.CompletableFuture;

/**
 * Publishes batches to NATS JetStream: a sender thread checks that a stream binds each subject,
 * then publishes the batch's messages asynchronously in order, each with its event id as {@code
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

  /** Publishes the batch's events in order; failures found before a publish are verdicts too. */
  @Override
  protected void send(PendingBatch batch) throws InterruptedException {
    List<RoutedEvent> events = batch.events();
    Map<String, Verdict> subjects = new HashMap<>(); // per subject: null = bound, else its verdict
    JetStream js;
    try {
      js = link.jetStream();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      batch.failFrom(0, Verdict.unavailable("cannot connect to NATS: " + describe(e)));
      return;
    }
    for (int i = 0; i < events.size(); i++) {
      if (batch.verdict(i) != null || batch.holdBehind(i)) {
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
        if (window.admit(batch, i)) { // else full (the rest is unavailable) or held behind
          publishOne(js, batch, i, subject, message);
        }
      } catch (IllegalArgumentException e) {
        // An invalid subject or header, or a message over the server's max_payload.
        batch.complete(i, Verdict.permanent("subject '" + subject + "': " + describe(e)));
      } catch (IOException | JetStreamApiException | IllegalStateException e) {
        batch.failFrom(i, batch.unavailable(i, describe(e)));
        return;
      }
    }
  }

  private void publishOne(
      JetStream js, PendingBatch batch, int index, String subject, Message message) {
    PublishOptions options =
        PublishOptions.builder()
            .messageId(batch.events().get(index).event().eventId().toString())
            .build();
    CompletableFuture<PublishAck> ack;
    try {
      ack = js.publishAsync(message, options);
    } catch (RuntimeException e) {
      window.release();
      throw e;
    }
    ack.whenComplete(
        (a, error) -> {
          // The verdict first, then the permit: a sender waiting for room then sees a failed key.
          if (error == null) {
            batch.complete(index, Verdict.published());
          } else {
            PublishFailures.Failure f = PublishFailures.classify(error, subject);
            if (f.noStream()) {
              link.forget(subject); // checked again before the next publish to it
            }
            batch.complete(index, f.verdict());
          }
          window.release();
        });
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
}
