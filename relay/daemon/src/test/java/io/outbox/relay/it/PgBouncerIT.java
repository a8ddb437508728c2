package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.Relay;
import io.outbox.relay.StartupException;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePgBouncer;
import io.outbox.testkit.PrivatePgBouncer.PoolMode;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay behind Debian's PgBouncer (docs/compatibility.md): in session mode it relays as it does
 * on a direct connection; in transaction mode each source refuses the start with one line saying
 * why and what to do, before it takes its lease.
 */
class PgBouncerIT {

  private static final String REFUSAL =
      "goes through a pooler that shares server sessions between clients";

  private final RelayFixture fx = new RelayFixture("pgbouncer");
  private PrivatePgBouncer bouncer;
  private Relay relay;

  /** Closes the relay, then PgBouncer (its server sessions are in the database), then drops it. */
  @AfterEach
  void stopAll() {
    try {
      if (relay != null) {
        relay.close(Duration.ofSeconds(10));
      }
    } finally {
      if (bouncer != null) {
        bouncer.close();
      }
      fx.close();
    }
  }

  /** The fixture's pipeline, {@code extra} merged in, reaching its database through PgBouncer. */
  private String throughBouncer(PoolMode mode, String extra) {
    bouncer = PrivatePgBouncer.start(mode);
    return fx.config(extra, Services.kafkaBootstrap(), bouncer.jdbcUrl(fx.db.name()));
  }

  @Test
  void pollingRelaysThroughSessionMode() throws Exception {
    KafkaTestSupport.createTopic(fx.topic("order"), 1);
    relay = RelayFixture.startWith(throughBouncer(PoolMode.SESSION, ""));

    List<UUID> ids = fx.commit(List.of(event("o-1", 1), event("o-2", 2), event("o-1", 3)));

    assertThat(fx.read(fx.topic("order"), 3, Duration.ofSeconds(60)))
        .extracting(r -> UUID.fromString(KafkaTestSupport.header(r, "event-id")))
        .containsExactlyInAnyOrderElementsOf(ids);
  }

  @Test
  void pollingRefusesTransactionModeWithOneLine() {
    String hocon = throughBouncer(PoolMode.TRANSACTION, "");

    assertThatThrownBy(() -> relay = RelayFixture.startWith(hocon))
        .isInstanceOf(StartupException.class)
        .hasMessageStartingWith("pipeline it: the database connection " + REFUSAL)
        .hasMessageContaining("connect to PostgreSQL directly or through pool_mode = session")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void cdcRefusesTransactionModeWithOneLine() {
    String hocon = throughBouncer(PoolMode.TRANSACTION, fx.cdc(""));

    assertThatThrownBy(() -> relay = RelayFixture.startWith(hocon))
        .isInstanceOf(StartupException.class)
        .hasMessageContaining(REFUSAL)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }
}
