package io.outbox.relay.config;

import com.typesafe.config.Config;
import io.outbox.relay.spi.DatabaseSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * One pipeline's settings ({@code outbox-relay.pipelines.<name>}), merged over {@code
 * outbox-relay.pipeline-defaults}.
 *
 * @param name the pipeline name
 * @param path the full key path of this pipeline, for messages
 * @param database where the outbox lives and what happens to published rows
 * @param sourceType {@code source.type}
 * @param sourceSettings the subtree {@code source.<sourceType>}
 * @param sinkType {@code sink.type}
 * @param sinkSettings the subtree {@code sink.<sinkType>}
 * @param destinationTemplate {@code routing.destination}
 * @param cloudEvents {@code cloudevents.*}: whether and how messages are CloudEvents
 * @param retry {@code retry.*}
 * @param reconnect {@code sink.reconnect-backoff.*}: how the pipeline probes a sink that is down
 * @param lanes {@code lanes}: batches in flight at once, one per lane
 * @param batchSize {@code batch-size}: most events per claim and publish
 * @param deadLetterDestination {@code dead-letter.destination}, or {@code null}
 * @param stallTimeout {@code stall-timeout}: how long the active instance's lanes may make no
 *     progress before it gives up the active role to a standby
 */
public record PipelineSettings(
    String name,
    String path,
    DatabaseSettings database,
    String sourceType,
    Config sourceSettings,
    String sinkType,
    Config sinkSettings,
    String destinationTemplate,
    CloudEventsSettings cloudEvents,
    RetrySettings retry,
    Backoff reconnect,
    int lanes,
    int batchSize,
    String deadLetterDestination,
    Duration stallTimeout) {

  public PipelineSettings {
    Objects.requireNonNull(stallTimeout, "stallTimeout");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(sourceType, "sourceType");
    Objects.requireNonNull(sinkType, "sinkType");
    Objects.requireNonNull(destinationTemplate, "destinationTemplate");
    Objects.requireNonNull(cloudEvents, "cloudEvents");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(reconnect, "reconnect");
  }

  /**
   * The CloudEvents form of the messages.
   *
   * @param mode none, binary or structured
   * @param sourceTemplate {@code cloudevents.source}: the {@code source} attribute, a template
   */
  public record CloudEventsSettings(CloudEventsMode mode, String sourceTemplate) {
    public CloudEventsSettings {
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(sourceTemplate, "sourceTemplate");
    }

    /** Plain messages, as without {@code cloudevents}. */
    public static final CloudEventsSettings NONE =
        new CloudEventsSettings(CloudEventsMode.NONE, "/outbox/${aggregate_type}");
  }

  /** {@code cloudevents.mode}. */
  public enum CloudEventsMode {
    /** Plain messages. */
    NONE,
    /** The payload as the body, the attributes as headers. */
    BINARY,
    /** The JSON event format as the body, the payload inside it. */
    STRUCTURED
  }

  /**
   * Retry of events that failed in a retryable way.
   *
   * @param maxAttempts failed attempts after which an event is dead-lettered ({@code >= 1})
   * @param backoff delay before the next attempt
   */
  public record RetrySettings(int maxAttempts, Backoff backoff) {}

  /**
   * Exponential backoff: {@code min(max, initial * multiplier^(n-1))}, then ± {@code jitter} of it.
   *
   * @param initial first delay
   * @param max cap
   * @param multiplier growth per attempt ({@code >= 1})
   * @param jitter fraction in {@code [0, 1]} by which a delay is randomly shortened or lengthened
   */
  public record Backoff(Duration initial, Duration max, double multiplier, double jitter) {}
}
