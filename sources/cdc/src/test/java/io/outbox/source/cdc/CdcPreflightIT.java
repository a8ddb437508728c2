package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.SourceException;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.Services;
import io.outbox.testkit.Teardown;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the CDC source says before it streams, when the database cannot serve it: {@code wal_level}
 * not logical (a private cluster left at initdb's default, {@code replica}) and a role without the
 * REPLICATION privilege, a dead-letter table the dead-letter move cannot write. The missing
 * publication is in {@link CdcSourceIT}.
 */
class CdcPreflightIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void walLevelNotLogicalIsNamedWithTheFix() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_preflight_wal"));
    Path dir = Files.createTempDirectory("cdc-preflight-certs-");
    String password = "pw-" + UUID.randomUUID();
    try (PrivatePostgres pg =
        PrivatePostgres.start(
            TestCertificates.create(dir, "cdc-preflight", TestCertificates.LOOPBACK), password)) {
      CdcSource source = fx.source(pg.url("postgres"), PrivatePostgres.ADMIN, password, Map.of());
      assertThatThrownBy(source::activate)
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("wal_level is 'replica'")
          .hasMessageContaining("needs wal_level = logical")
          .hasMessageNotContaining(password);
    }
  }

  @Test
  void aRoleWithoutReplicationIsNamedWithTheFix() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_preflight_role"));
    String role = "cdc_norepl_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.execute("CREATE ROLE " + role + " LOGIN NOREPLICATION PASSWORD 'not-a-secret'");
      st.execute("GRANT SELECT ON outbox TO " + role);
    }
    try {
      CdcSource source = fx.source(fx.db.url(), role, "not-a-secret", Map.of());
      assertThatThrownBy(source::activate)
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("the database user " + role)
          .hasMessageContaining("lacks the REPLICATION privilege")
          .hasMessageContaining("ALTER ROLE");
    } finally {
      fx.close();
      // The database and its grants are gone now; the role is cluster-wide.
      try (Connection c =
              DriverManager.getConnection(
                  Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
          Statement st = c.createStatement()) {
        st.execute("DROP ROLE IF EXISTS " + role);
      }
    }
  }

  @Test
  void aDeadLetterTableTheMoveCannotWriteIsNamed() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_preflight_dead_letter"));
    fx.execute("ALTER TABLE outbox_dead_letter ADD COLUMN tenant text NOT NULL");
    CdcSource source = fx.source(1, Map.of(), new java.util.concurrent.CopyOnWriteArrayList<>());

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessage(
            "pipeline "
                + CdcFixture.PIPELINE
                + ": column public.outbox_dead_letter.tenant is NOT NULL without a default, and"
                + " the dead-letter move does not write it; give it a default or drop NOT NULL");
  }

  /**
   * The start-up check both sources share: a mapping (columns.*) that does not fit the table is
   * refused before the relay starts, one line per column, naming the key to fix.
   */
  @Test
  void aMappingThatDoesNotFitTheTableIsRefusedAtStartUpOneLinePerColumn() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_preflight_columns"));
    fx.execute("ALTER TABLE outbox RENAME COLUMN event_type TO type");
    Map<String, String> columns = new java.util.HashMap<>(OutboxColumns.DEFAULT.byKey());
    columns.put("event-type", "type");
    columns.put("aggregate-id", "aggregate_key");
    CdcSource source = fx.sourceWithColumns(columns);

    assertThat(source.schemaProblems())
        .containsExactly(
            "table public.outbox lacks the column aggregate_key (columns.aggregate-id)");

    CdcSource unmapped = fx.source(1, Map.of(), new java.util.concurrent.CopyOnWriteArrayList<>());
    assertThat(unmapped.schemaProblems())
        .containsExactly("table public.outbox lacks the column event_type (columns.event-type)");
  }
}
