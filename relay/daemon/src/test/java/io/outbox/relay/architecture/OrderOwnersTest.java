package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.LaneFunction;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Verdict;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Per-key order is decided in few, named places (docs/design.md, "Lanes and per-key order"): a
 * class that looks at an event's key (its {@link AggregateKey}) or holds an event behind another
 * ({@link Verdict#heldBehind}) or asks whether a verdict holds its key back ({@link
 * Verdict#holdsBackItsKey}) decides order. This test lists them; a class outside the list that
 * starts doing either fails the build, so a new sink or path asks the owner instead of deciding
 * again.
 */
class OrderOwnersTest {

  /**
   * The classes allowed to look at keys, each with why. Sinks are not among them: {@code
   * PendingBatch} decides for every sink which event may be sent (issue #29). The list is meant to
   * shrink as the other places move to one owner.
   */
  private static final Set<String> OWNERS =
      Set.of(
          // The sinks' one owner: which event of a batch may go to the broker, and when.
          "io.outbox.relay.spi.support.PendingBatch",
          // The pipeline's one owner: the waves of a claimed batch and the keys held back in it,
          // for both publishers and the settlement planner.
          "io.outbox.relay.pipeline.KeyOrder",
          // The CDC source's stream (its package io.outbox.source.cdc.stream): its lanes, claims
          // and
          // keys held back in memory (the polling source does the same in its SQL).
          "io.outbox.source.cdc.stream.Intake",
          "io.outbox.source.cdc.stream.LaneClaims",
          "io.outbox.source.cdc.stream.StreamLane",
          "io.outbox.source.cdc.stream.StreamState",
          "io.outbox.source.cdc.stream.Parking",
          "io.outbox.source.cdc.stream.ParkedKey",
          "io.outbox.source.cdc.stream.ParkedRows");

  /**
   * The relay's own classes: core, SPI, sources, sinks and the Kafka Connect connector (not the
   * test kit, which checks order).
   */
  private static final JavaClasses RELAY =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(location -> !location.contains("/io/outbox/testkit/"))
          .importPackages("io.outbox");

  private static final DescribedPredicate<JavaClass> AN_OWNER =
      DescribedPredicate.describe(
          "an owner of per-key order", c -> OWNERS.contains(c.getName().replaceAll("\\$.*", "")));

  @Test
  void theRulesSeeEverySinkAndSource() {
    // Otherwise they would pass on an empty import (say, the modules as jars not found).
    assertThat(
            List.of(
                "io.outbox.sink.kafka.KafkaSink",
                "io.outbox.sink.rabbitmq.RabbitSink",
                "io.outbox.sink.nats.NatsSink",
                "io.outbox.sink.redis.RedisSink",
                "io.outbox.source.polling.PollingSource",
                "io.outbox.source.cdc.CdcSource",
                "io.outbox.relay.pipeline.Lane",
                // The connector: its batches go out in KeyOrder's waves, settled by the planner.
                "io.outbox.connect.OutboxSourceTask",
                "io.outbox.connect.LaneBatch"))
        .allMatch(RELAY::contain);
    assertThat(OWNERS).allMatch(RELAY::contain);
  }

  @Test
  void onlyTheOwnersLookAtAnEventsKey() {
    noClasses()
        .that(DescribedPredicate.not(AN_OWNER))
        .and()
        .doNotBelongToAnyOf(AggregateKey.class, OutboxEvent.class)
        .should()
        .dependOnClassesThat()
        .belongToAnyOf(AggregateKey.class)
        .orShould()
        .callMethod(OutboxEvent.class, "key")
        .because("per-key order is decided by its owners only (docs/design.md)")
        .check(RELAY);
  }

  /** The lane of a key has one definition, in its SQL and its Java form ({@code LaneFunction}). */
  @Test
  void onlyTheKeyAndThePollingClaimComputeALane() {
    noClasses()
        .that()
        .doNotBelongToAnyOf(LaneFunction.class, AggregateKey.class)
        .and()
        .doNotHaveFullyQualifiedName("io.outbox.source.polling.OutboxSql")
        .and()
        // Which lane's position covers a row: the polling claim's lane, in the same SQL.
        .doNotHaveFullyQualifiedName("io.outbox.source.postgres.LanePositions")
        .should()
        .dependOnClassesThat()
        .belongToAnyOf(LaneFunction.class)
        .because("the lane of a key is LaneFunction's, in SQL or in Java (docs/design.md)")
        .check(RELAY);
  }

  @Test
  void onlyTheOwnersHoldAnEventBehindAnotherOrAskWhetherAVerdictDoes() {
    noClasses()
        .that(DescribedPredicate.not(AN_OWNER))
        .and()
        .doNotBelongToAnyOf(Verdict.class)
        .should()
        .callMethod(Verdict.class, "heldBehind", Verdict.class)
        .orShould()
        .callMethod(Verdict.class, "holdsBackItsKey")
        .because("per-key order is decided by its owners only (docs/design.md)")
        .check(RELAY);
  }
}
