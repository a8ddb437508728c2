package io.outbox.relay.spi;

import java.util.Map;
import java.util.Objects;

/**
 * Where a pipeline's outbox lives and what happens to a published row.
 *
 * @param url JDBC URL of the PostgreSQL database
 * @param user database user
 * @param password database password, or {@code null}; never printed
 * @param properties extra JDBC driver properties ({@code database.properties})
 * @param table the outbox table, possibly schema-qualified
 * @param deadLetterTable the dead-letter table, possibly schema-qualified
 * @param onPublish what happens to a row once its event is published
 * @param pipeline the pipeline name, written into the dead-letter table's {@code pipeline} column
 */
public record DatabaseSettings(
    String url,
    String user,
    String password,
    Map<String, String> properties,
    String table,
    String deadLetterTable,
    OnPublish onPublish,
    String pipeline) {

  /** What happens to an outbox row once its event is published. */
  public enum OnPublish {
    /** Set {@code published_at}; the row stays for auditing until retention removes it. */
    MARK,
    /** Delete the row. */
    DELETE
  }

  public DatabaseSettings {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(deadLetterTable, "deadLetterTable");
    Objects.requireNonNull(onPublish, "onPublish");
    properties = properties == null ? Map.of() : Map.copyOf(properties);
  }

  /** Masks the password. */
  @Override
  public String toString() {
    return "DatabaseSettings[url="
        + url
        + ", user="
        + user
        + ", password="
        + (password == null ? "<none>" : "******")
        + ", table="
        + table
        + ", deadLetterTable="
        + deadLetterTable
        + ", onPublish="
        + onPublish
        + "]";
  }
}
