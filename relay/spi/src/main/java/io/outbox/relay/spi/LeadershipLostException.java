package io.outbox.relay.spi;

/** Another instance became active for the pipeline; this one must stop publishing. */
public class LeadershipLostException extends SourceException {
  public LeadershipLostException(String message) {
    super(message);
  }
}
