package io.outbox.schema;

/**
 * A migration of an outbox's tables failed. The message is one line naming the outbox table and the
 * underlying cause (e.g. the PostgreSQL error), never a password; the original exception is the
 * cause.
 */
public final class MigrationException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  MigrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
