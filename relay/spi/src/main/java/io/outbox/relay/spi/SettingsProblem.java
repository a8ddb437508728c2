package io.outbox.relay.spi;

/**
 * One thing wrong with the configuration.
 *
 * @param path the full key path, e.g. {@code
 *     outbox-relay.pipelines.orders.sink.kafka.producer.acks}
 * @param message what is wrong, naming the bad value (never a secret)
 */
public record SettingsProblem(String path, String message) {
  @Override
  public String toString() {
    return path + ": " + message;
  }
}
