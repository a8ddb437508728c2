package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.typesafe.config.Config;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Settings are read in one place (docs/architecture.md, "Where decisions live"): a typed value of
 * the configuration ({@code getDuration}, {@code getInt}, {@code getString}, ...) is read by {@code
 * SettingsReader}, which records each bad value as a problem with its key path, its value and its
 * {@code file:line}; a class that reads a typed value itself bypasses that and spells the key
 * again. This test lists the few classes that still do, each with why.
 */
class SettingsOwnerTest {

  /** The typed getters of {@link Config}. */
  private static final Set<String> TYPED_GETTERS =
      Set.of(
          "getBoolean",
          "getNumber",
          "getInt",
          "getLong",
          "getDouble",
          "getString",
          "getEnum",
          "getBytes",
          "getMemorySize",
          "getDuration",
          "getPeriod",
          "getTemporal",
          "getStringList",
          "getIntList",
          "getLongList",
          "getDoubleList",
          "getBooleanList",
          "getDurationList",
          "getBytesList");

  private static final Set<String> READERS =
      Set.of(
          // The one reader.
          "io.outbox.relay.spi.support.SettingsReader",
          "io.outbox.relay.spi.support.SettingsTree",
          // The demo starts a consumer on the broker its sink writes to: it reads the sink's
          // address from settings the relay has already checked.
          "io.outbox.relay.demo.Demo",
          // status names an exactly-once pipeline from its checked sink settings.
          "io.outbox.relay.cli.StatusCommand",
          // --since parses a duration written on the command line, not a setting.
          "io.outbox.relay.cli.DeadLetterSelection");

  /**
   * The relay's classes; the test kit, the bench and the soak are tools and may read as tests do.
   */
  private static final JavaClasses RELAY =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(
              location ->
                  !location.contains("/io/outbox/testkit/")
                      && !location.contains("/io/outbox/bench/")
                      && !location.contains("/io/outbox/soak/"))
          .importPackages("io.outbox");

  private static final DescribedPredicate<JavaMethodCall> A_TYPED_READ =
      DescribedPredicate.describe(
          "a typed getter of com.typesafe.config.Config",
          call ->
              call.getTargetOwner().isAssignableTo(Config.class)
                  && TYPED_GETTERS.contains(call.getName()));

  @Test
  void theRuleSeesTheReaderAndThePlugIns() {
    assertThat(
            java.util.List.of(
                "io.outbox.relay.spi.support.SettingsReader",
                "io.outbox.sink.kafka.KafkaSinkSettings",
                "io.outbox.source.cdc.CdcSettings",
                "io.outbox.relay.config.PipelineBinder"))
        .allMatch(RELAY::contain);
    assertThat(READERS).allMatch(RELAY::contain);
  }

  @Test
  void onlyTheSettingsReaderReadsTypedValues() {
    noClasses()
        .that(
            DescribedPredicate.describe(
                "not a listed reader",
                (JavaClass c) -> !READERS.contains(c.getName().replaceAll("\\$.*", ""))))
        .should()
        .callMethodWhere(A_TYPED_READ)
        .because("SettingsReader reads settings once and reports every bad value with its origin")
        .check(RELAY);
  }
}
