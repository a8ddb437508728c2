package io.outbox.relay.cli;

/**
 * An expected failure of a command (a database that cannot be reached...): its one-line message is
 * printed without a stack trace and the exit code is 1.
 */
final class CommandFailedException extends RuntimeException {
  CommandFailedException(String message) {
    super(message);
  }
}
