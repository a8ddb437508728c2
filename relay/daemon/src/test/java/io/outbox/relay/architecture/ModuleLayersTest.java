package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The modules' map (docs/architecture.md) as rules: each module may import only the modules drawn
 * below it; no plug-in imports another plug-in or the core; the application's client imports
 * nothing but the JDK; nothing the relay ships imports the test kit, the bench, the soak or the
 * Testcontainers module (whose own test keeps it free of the relay). A new import across the map
 * fails the build.
 */
class ModuleLayersTest {

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.outbox");

  @Test
  void theRulesSeeEveryModule() {
    // Otherwise they would pass on an empty import (the modules as jars not found).
    assertThat(
            List.of(
                "io.outbox.client.OutboxWriter",
                "io.outbox.schema.Migrator",
                "io.outbox.admin.OutboxStatus",
                "io.outbox.relay.spi.Sink",
                "io.outbox.source.postgres.LeaderLease",
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
  void everyModuleImportsOnlyTheModulesBelowIt() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("client")
        .definedBy("io.outbox.client..")
        .layer("schema")
        .definedBy("io.outbox.schema..")
        .layer("admin")
        .definedBy("io.outbox.admin..")
        .layer("spi")
        .definedBy("io.outbox.relay.spi..")
        .layer("sources' PostgreSQL runtime")
        .definedBy("io.outbox.source.postgres..")
        .layer("polling source")
        .definedBy("io.outbox.source.polling..")
        .layer("CDC source")
        .definedBy("io.outbox.source.cdc..")
        .layer("sinks")
        .definedBy("io.outbox.sink..")
        .layer("core")
        .definedBy(
            "io.outbox.relay",
            "io.outbox.relay.config..",
            "io.outbox.relay.http..",
            "io.outbox.relay.pipeline..")
        .layer("daemon")
        .definedBy("io.outbox.relay.cli..", "io.outbox.relay.demo..")
        .layer("connect")
        .definedBy("io.outbox.connect..")
        .layer("tools")
        .definedBy(
            "io.outbox.testkit..",
            "io.outbox.bench..",
            "io.outbox.soak..",
            "io.outbox.testcontainers..")
        .whereLayer("client")
        .mayNotAccessAnyLayer()
        .whereLayer("schema")
        .mayOnlyAccessLayers("client")
        .whereLayer("admin")
        .mayOnlyAccessLayers("client")
        .whereLayer("spi")
        .mayNotAccessAnyLayer()
        .whereLayer("sources' PostgreSQL runtime")
        .mayOnlyAccessLayers("spi", "client", "admin")
        .whereLayer("polling source")
        .mayOnlyAccessLayers("spi", "sources' PostgreSQL runtime", "client", "admin")
        .whereLayer("CDC source")
        .mayOnlyAccessLayers("spi", "sources' PostgreSQL runtime", "client", "admin")
        .whereLayer("sinks")
        .mayOnlyAccessLayers("spi")
        .whereLayer("core")
        .mayOnlyAccessLayers("spi")
        .whereLayer("daemon")
        .mayOnlyAccessLayers(
            "core",
            "spi",
            "client",
            "schema",
            "admin",
            "sources' PostgreSQL runtime",
            "polling source",
            "CDC source",
            "sinks")
        .whereLayer("connect")
        .mayOnlyAccessLayers("core", "spi", "sources' PostgreSQL runtime", "polling source")
        .whereLayer("tools")
        .mayNotBeAccessedByAnyLayer()
        .because("docs/architecture.md draws the modules so; the bench has a main of its own")
        .check(MAIN);
  }

  @Test
  void aSinkImportsNoOtherSink() {
    String[] sinks = {"kafka", "rabbitmq", "nats", "redis"};
    for (String sink : sinks) {
      String[] others =
          java.util.Arrays.stream(sinks)
              .filter(s -> !s.equals(sink))
              .map(s -> "io.outbox.sink." + s + "..")
              .toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage("io.outbox.sink." + sink + "..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(others)
          .because("a plug-in sees the SPI only")
          .check(MAIN);
    }
  }

  @Test
  void theClientImportsTheJdkAlone() {
    noClasses()
        .that()
        .resideInAPackage("io.outbox.client..")
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideOutsideOfPackages("java..", "io.outbox.client.."))
        .because("an application puts it on its classpath to write events, with nothing else")
        .check(MAIN);
  }
}
