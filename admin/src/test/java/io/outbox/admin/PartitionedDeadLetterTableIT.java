package io.outbox.admin;

import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.testkit.TestDatabase;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link DeadLetterTableIT}'s list, replay and purge on a partitioned outbox ({@code layout =
 * partitioned}), which has no unique index on {@code event_id} of its own.
 */
class PartitionedDeadLetterTableIT extends DeadLetterTableIT {

  /** Hides {@link DeadLetterTableIT#migrate}: the same tables, partitioned. */
  @BeforeAll
  static void migrate() {
    db = TestDatabase.create("schema_dead_letters_partitioned");
    new Migrator(TABLES, new PartitionedLayout(2, 1000))
        .migrate(db.url(), db.user(), db.password());
  }
}
