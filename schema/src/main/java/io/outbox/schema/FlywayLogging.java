package io.outbox.schema;

import org.flywaydb.core.api.logging.Log;
import org.flywaydb.core.api.logging.LogCreator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes Flyway's log to SLF4J one level lower: its routine INFO lines ("Successfully validated",
 * "Schema ... is up to date") become DEBUG under {@code org.flywaydb}, warnings and errors stay.
 * Public only because Flyway instantiates it by class name ({@code loggers}); not an API.
 */
public final class FlywayLogging implements LogCreator {

  /** Called by Flyway. */
  public FlywayLogging() {}

  @Override
  public Log createLogger(Class<?> clazz) {
    Logger logger = LoggerFactory.getLogger(clazz);
    return new Log() {
      @Override
      public void debug(String message) {
        logger.debug(message);
      }

      @Override
      public void info(String message) {
        logger.debug(message);
      }

      @Override
      public void warn(String message) {
        logger.warn(message);
      }

      @Override
      public void error(String message) {
        logger.error(message);
      }

      @Override
      public void error(String message, Exception e) {
        logger.error(message, e);
      }

      @Override
      public void notice(String message) {
        logger.debug(message);
      }
    };
  }
}
