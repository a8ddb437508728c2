package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.AccessTarget;
import com.tngtech.archunit.core.domain.AccessTarget.CodeUnitAccessTarget;
import com.tngtech.archunit.core.domain.AccessTarget.FieldAccessTarget;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Time comes in one way (issue #31, the way Kafka's client injects its {@code Time}): the daemon's
 * {@code Relay} makes one {@link Clock} and one {@link Ticker} and hands them to every pipeline
 * and, through {@code PluginContext}, to every plug-in; the classes that decide by time (a backoff,
 * a deadline, a lease's renewal and expiry, a stall) ask those, so that their tests drive the time
 * instead of sleeping. This test lists the few entry points where the system's time comes in; a
 * class outside the list that reads it itself (a call or a method reference) fails the build.
 *
 * <p>The test kit, the bench and the soak are left out: they are tools that measure and wait in
 * real time, and decide nothing of the relay. Waiting itself ({@code Thread.sleep}, a timed {@code
 * wait} or {@code poll}) is not time read: a wait may be real as long as when it ends is decided on
 * the injected ticker.
 */
class TimeOwnersTest {

  /** Where the system's time comes in, each with why; meant to stay this short. */
  private static final Map<String, String> ENTRY_POINTS =
      Map.of(
          "io.outbox.relay.spi.Ticker",
          "Ticker.SYSTEM itself: System::nanoTime, the one monotonic source",
          "io.outbox.relay.Relay",
          "the daemon's owner of time: one Clock and one Ticker for every pipeline and plug-in",
          "io.outbox.connect.OutboxSourceTask",
          "Kafka Connect makes the task, not the Relay: the connector's time comes in there and"
              + " reaches its source through the plug-in context",
          "io.outbox.relay.config.PluginCheck",
          "the plug-in contexts of the settings check, made before any Relay exists; validate()"
              + " reads settings, never the time");

  /**
   * A package allowed as a whole: the {@code demo} command's order service and consumers time the
   * end-to-end latency a user watches, in real time; they decide nothing of the relay.
   */
  private static final String DEMO = "io.outbox.relay.demo";

  /** What reads the system's time: no-argument {@code now()} and the system clocks and ticker. */
  private static final Map<Class<?>, Set<String>> SYSTEM_TIME =
      Map.of(
          System.class, Set.of("nanoTime", "currentTimeMillis"),
          Instant.class, Set.of("now"),
          LocalDateTime.class, Set.of("now"),
          OffsetDateTime.class, Set.of("now"),
          ZonedDateTime.class, Set.of("now"),
          Clock.class, Set.of("systemUTC", "systemDefaultZone"),
          Ticker.class, Set.of("SYSTEM"));

  /** Everything shipped: core, SPI, sources, sinks, connector, daemon, client, schema, admin. */
  private static final JavaClasses RELAY =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(
              location ->
                  !location.contains("/io/outbox/testkit/")
                      && !location.contains("/io/outbox/bench/")
                      && !location.contains("/io/outbox/soak/"))
          .importPackages("io.outbox");

  private static final DescribedPredicate<JavaAccess<?>> THE_SYSTEMS_TIME =
      DescribedPredicate.describe(
          "the system's time (System.nanoTime/currentTimeMillis, a no-argument now(),"
              + " Clock.systemUTC/systemDefaultZone, Ticker.SYSTEM)",
          a -> readsSystemTime(a.getTarget()));

  private static final DescribedPredicate<JavaClass> AN_ENTRY_POINT =
      DescribedPredicate.describe(
          "an entry point of time",
          c ->
              ENTRY_POINTS.containsKey(c.getName().replaceAll("\\$.*", ""))
                  || c.getPackageName().equals(DEMO));

  private static boolean readsSystemTime(AccessTarget target) {
    Set<String> names = SYSTEM_TIME.get(target.getOwner().reflect());
    if (names == null || !names.contains(target.getName())) {
      return false;
    }
    if (target instanceof FieldAccessTarget) {
      return true; // Ticker.SYSTEM
    }
    // now(Clock), now(ZoneId) take the time they are given; now() reads the system's.
    return target instanceof CodeUnitAccessTarget c && c.getRawParameterTypes().isEmpty();
  }

  private static ArchRule rule() {
    return noClasses()
        .that(DescribedPredicate.not(AN_ENTRY_POINT))
        .should()
        .accessTargetWhere(THE_SYSTEMS_TIME)
        .because(
            "time comes in through the Relay's Clock and Ticker (PluginContext for plug-ins), so"
                + " that timing rules are tested on a driven clock (issue #31)");
  }

  @Test
  void theRuleSeesEveryModuleAndEveryEntryPoint() {
    // Otherwise it would pass on an empty import (the modules as jars not found).
    assertThat(
            List.of(
                "io.outbox.relay.pipeline.Pipeline",
                "io.outbox.relay.spi.support.BatchPublisher",
                "io.outbox.source.postgres.LeaseKeeper",
                "io.outbox.source.polling.PollingSource",
                "io.outbox.source.cdc.engine.StreamSession",
                "io.outbox.sink.kafka.HangingTransactions",
                "io.outbox.sink.rabbitmq.RabbitSink",
                "io.outbox.sink.nats.NatsSink",
                "io.outbox.sink.redis.RedisSink",
                "io.outbox.relay.cli.RunCommand",
                DEMO + ".Demo"))
        .allMatch(RELAY::contain);
    assertThat(ENTRY_POINTS.keySet()).allMatch(RELAY::contain);
  }

  @Test
  void theRuleCatchesAMethodReferenceToo() {
    // Ticker.SYSTEM is System::nanoTime: without its place on the list, the rule must fail on it.
    JavaClasses ticker = new ClassFileImporter().importClasses(Ticker.class);
    assertThatThrownBy(
            () ->
                noClasses()
                    .should()
                    .accessTargetWhere(THE_SYSTEMS_TIME)
                    .allowEmptyShould(true)
                    .check(ticker))
        .hasMessageContaining("references method <java.lang.System.nanoTime()>");
  }

  @Test
  void onlyTheEntryPointsReadTheSystemsTime() {
    rule().check(RELAY);
  }
}
