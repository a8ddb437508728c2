package io.outbox.relay;

/** The relay cannot start as configured (e.g. a destination the broker says does not exist). */
public final class StartupException extends RuntimeException {
  public StartupException(String message) {
    super(message);
  }
}
