package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The modules' layers (docs/architecture.md): the SPI at the bottom, the plug-ins (sources and
 * sinks) on the SPI alone, the core beside them, the daemon on top; no module imports one above it,
 * no plug-in imports another or the core's internals, and nothing the relay ships imports the test
 * kit, the bench or the soak. A new import across a layer fails the build.
 */
class ModuleLayersTest {

  private static final String SPI = "io.outbox.relay.spi..";
  private static final String SCHEMA = "io.outbox.schema..";
  private static final String[] CORE = {
    "io.outbox.relay",
    "io.outbox.relay.config..",
    "io.outbox.relay.http..",
    "io.outbox.relay.pipeline.."
  };
  private static final String[] DAEMON = {"io.outbox.relay.cli..", "io.outbox.relay.demo.."};
  private static final String[] PLUG_INS = {
    "io.outbox.source.polling..",
    "io.outbox.source.cdc..",
    "io.outbox.sink.kafka..",
    "io.outbox.sink.rabbitmq..",
    "io.outbox.sink.nats..",
    "io.outbox.sink.redis.."
  };
  private static final String[] TOOLS = {
    "io.outbox.testkit..", "io.outbox.bench..", "io.outbox.soak.."
  };

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.outbox");

  @Test
  void theRulesSeeEveryModule() {
    // Otherwise they would pass on an empty import (the modules as jars not found).
    assertThat(
            List.of(
                "io.outbox.relay.spi.Sink",
                "io.outbox.schema.Migrator",
                "io.outbox.relay.pipeline.Pipeline",
                "io.outbox.relay.cli.RunCommand",
                "io.outbox.source.polling.PollingSource",
                "io.outbox.source.cdc.CdcSource",
                "io.outbox.sink.kafka.KafkaSinkProvider",
                "io.outbox.sink.rabbitmq.RabbitSink",
                "io.outbox.sink.nats.NatsSink",
                "io.outbox.sink.redis.RedisSink",
                "io.outbox.connect.OutboxSourceTask"))
        .allMatch(MAIN::contain);
  }

  @Test
  void theSpiImportsNothingOfTheRelay() {
    noClasses()
        .that()
        .resideInAPackage(SPI)
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideInAPackage("io.outbox..")
                .and(JavaClass.Predicates.resideOutsideOfPackage(SPI)))
        .because("plug-ins compile against the SPI alone")
        .check(MAIN);
  }

  /**
   * The schema module holds the migrations and the runtime both sources share; it imports the SPI
   * (the one arrow that points up, issue #31: the shared runtime is to move into a module of its
   * own), from these classes only, and nothing else of the relay.
   */
  private static final java.util.Set<String> SCHEMA_ON_THE_SPI =
      java.util.Set.of(
          "io.outbox.schema.ClaimVerdicts",
          "io.outbox.schema.OutboxClaim",
          "io.outbox.schema.OutboxLedger",
          "io.outbox.schema.SourceLifecycle");

  @Test
  void theSchemaImportsTheSpiFromItsSharedRuntimeOnlyAndNothingAbove() {
    noClasses()
        .that()
        .resideInAPackage(SCHEMA)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(concat(CORE, DAEMON, PLUG_INS, new String[] {"io.outbox.connect.."}))
        .check(MAIN);
    noClasses()
        .that()
        .resideInAPackage(SCHEMA)
        .and(
            com.tngtech.archunit.base.DescribedPredicate.describe(
                "not among the shared runtime's classes listed",
                (JavaClass c) -> !SCHEMA_ON_THE_SPI.contains(c.getName().replaceAll("\\$.*", ""))))
        .should()
        .dependOnClassesThat()
        .resideInAPackage(SPI)
        .because("the migrations and the operators' queries stand below the SPI")
        .check(MAIN);
    assertThat(SCHEMA_ON_THE_SPI).allMatch(MAIN::contain);
  }

  @Test
  void aPlugInImportsNeitherTheCoreNorTheDaemonNorAnotherPlugIn() {
    for (String plugIn : PLUG_INS) {
      String[] others =
          java.util.Arrays.stream(PLUG_INS).filter(p -> !p.equals(plugIn)).toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage(plugIn)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(concat(CORE, DAEMON, others, new String[] {"io.outbox.connect.."}))
          .because("a plug-in sees the SPI (and the shared PostgreSQL runtime) only")
          .check(MAIN);
    }
  }

  @Test
  void theCoreImportsNoPlugInAndNotTheDaemon() {
    noClasses()
        .that()
        .resideInAnyPackage(CORE)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(concat(PLUG_INS, DAEMON, new String[] {"io.outbox.connect.."}))
        .because("the core runs any source and sink through the SPI; the daemon picks them")
        .check(MAIN);
  }

  @Test
  void nothingTheRelayShipsImportsTheTestKitTheBenchOrTheSoak() {
    noClasses()
        .that()
        .resideOutsideOfPackages(TOOLS)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(TOOLS)
        .because("they are tools around the relay (the daemon loads the bench by name only)")
        .check(MAIN);
  }

  private static String[] concat(String[]... groups) {
    return java.util.Arrays.stream(groups).flatMap(java.util.Arrays::stream).toArray(String[]::new);
  }
}
