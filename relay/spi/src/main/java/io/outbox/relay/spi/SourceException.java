package io.outbox.relay.spi;

/** The source's database failed; the pipeline backs off and tries again. */
public class SourceException extends RuntimeException {
  public SourceException(String message, Throwable cause) {
    super(message, cause);
  }

  public SourceException(String message) {
    super(message);
  }
}
