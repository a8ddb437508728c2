package io.outbox.testcontainers;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
import org.testcontainers.utility.DockerImageName;

/** The container's configuration, without a Docker engine: what it would ask the image to run. */
class OutboxRelayContainerTest {

  @Test
  void settingsBecomeConfigForceVariables() {
    OutboxRelayContainer relay =
        new OutboxRelayContainer()
            .withPipeline("order_events")
            .withDatabase("jdbc:postgresql://postgres:5432/app", "app", "secret")
            .withKafka("kafka:19092")
            .withSetting("shutdown-timeout", "5s");
    relay.configure();

    assertThat(relay.getEnvMap())
        .containsEntry("CONFIG_FORCE_outbox__relay_shutdown__timeout", "5s")
        .containsEntry(
            "CONFIG_FORCE_outbox__relay_pipelines_order___events_database_url",
            "jdbc:postgresql://postgres:5432/app")
        .containsEntry("CONFIG_FORCE_outbox__relay_pipelines_order___events_database_user", "app")
        .containsEntry(
            "CONFIG_FORCE_outbox__relay_pipelines_order___events_database_password", "secret")
        .containsEntry("CONFIG_FORCE_outbox__relay_pipelines_order___events_sink_type", "kafka")
        .containsEntry(
            "CONFIG_FORCE_outbox__relay_pipelines_order___events_sink_kafka_bootstrap__servers",
            "kafka:19092");
    assertThat(relay.getExposedPorts()).containsExactly(OutboxRelayContainer.HTTP_PORT);
    assertThat(relay.getCommandParts()).isEmpty(); // the image's own: run --config ...
  }

  @Test
  void migrateOnStartRunsMigrateThenRun() {
    OutboxRelayContainer relay = new OutboxRelayContainer().withMigrateOnStart();
    relay.configure();

    assertThat(relay.getCommandParts())
        .containsExactly(
            "-c",
            "outbox-relay migrate --config /etc/outbox-relay/relay.conf"
                + " && exec outbox-relay run --config /etc/outbox-relay/relay.conf");
  }

  @Test
  void hostNetworkingPublishesNothingAndAnswersOnTheRelaysPort() {
    OutboxRelayContainer relay =
        new OutboxRelayContainer().withNetworkMode("host").withSetting("http.port", "9511");
    relay.configure();

    assertThat(relay.getExposedPorts()).isEmpty();
    assertThat(relay.getMappedPort(OutboxRelayContainer.HTTP_PORT)).isEqualTo(9511);
  }

  @Test
  void runsTheImageOfItsOwnVersionByDefault() {
    // The module's version, filtered into version.properties by the build.
    assertThat(OutboxRelayContainer.DEFAULT_TAG).matches("\\d+\\.\\d+\\.\\d+.*");
    assertThatThrownBy(() -> new OutboxRelayContainer(DockerImageName.parse("postgres:17")))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void importsTestcontainersAndTheJdkAlone() {
    // docker-java's API is Testcontainers' own (withCreateContainerCmdModifier).
    classes()
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "java..",
            "org.testcontainers..",
            "com.github.dockerjava.api..",
            "io.outbox.testcontainers..")
        .because("an application's tests put it on their classpath, not the relay")
        .check(
            new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.outbox.testcontainers"));
  }
}
