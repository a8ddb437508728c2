package io.outbox.relay.dist;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxWriter;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;

/** The events the archive's and the image's tests relay: orders of four aggregates. */
final class OrderEvents {

  private OrderEvents() {}

  /** Writes {@code n} OrderCreated events into {@code outbox}, over aggregates o-0..o-3. */
  static int write(TestDatabase db, int n) throws SQLException {
    try (Connection c = db.connect()) {
      OutboxWriter writer = OutboxWriter.forTable("outbox");
      for (int i = 0; i < n; i++) {
        writer.write(
            c,
            OutboxMessage.builder()
                .aggregate("order", "o-" + (i % 4))
                .eventType("OrderCreated")
                .payload("{\"n\":" + i + "}")
                .build());
      }
    }
    return n;
  }

  /** How many rows of {@code outbox} are not marked published yet. */
  static long unpublished(TestDatabase db) throws SQLException {
    return Sql.number(db::connect, "SELECT count(*) FROM outbox WHERE published_at IS NULL");
  }
}
