package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.Relay;
import io.outbox.relay.StartupException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue #12, point 5: a dead-letter table the relay could never move dead letters into stops the
 * daemon at start-up with one line naming the table, the column and what is wrong, instead of a
 * pipeline that retries (or re-publishes) for ever. A table not created yet is not such an error:
 * the relay starts and waits for {@code migrate}.
 */
class SchemaStartupCheckIT {
  private final RelayFixture fx = new RelayFixture("schema_startup");

  @AfterEach
  void tearDown() {
    fx.close();
  }

  @Test
  void aNotNullColumnTheMoveDoesNotWriteStopsTheStartNamingIt() throws Exception {
    sql("ALTER TABLE outbox_dead_letter ADD COLUMN tenant text NOT NULL");

    assertThatThrownBy(() -> fx.start(""))
        .isInstanceOf(StartupException.class)
        .hasMessageContaining("pipeline it")
        .hasMessageContaining("outbox_dead_letter.tenant is NOT NULL without a default")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void aDeadLetterColumnOfAnotherTypeStopsTheStartNamingIt() throws Exception {
    sql("ALTER TABLE outbox_dead_letter ALTER COLUMN payload TYPE text USING payload::text");

    assertThatThrownBy(() -> fx.start(""))
        .isInstanceOf(StartupException.class)
        .hasMessageContaining("outbox_dead_letter.payload has type text")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void tablesNotMigratedYetDoNotStopTheStart() throws Exception {
    sql("DROP TABLE outbox_dead_letter");
    sql("DROP TABLE outbox");

    Relay relay = fx.start("");
    try {
      assertThat(relay.pipelines()).hasSize(1);
    } finally {
      relay.close(Duration.ofSeconds(10));
    }
  }

  private void sql(String statement) throws Exception {
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }
}
