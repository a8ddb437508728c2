package io.outbox.sink.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.SecretKeyAnswers;
import io.outbox.testkit.SinkContexts;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NatsSinkSettingsTest {

  private static final String PATH = SinkContexts.path("nats");

  private static List<String> problems(String hocon) {
    return SettingsReader.problems(SinkContexts.context("nats", hocon), NatsSinkSettings::read)
        .stream()
        .map(p -> p.path() + ": " + p.message())
        .toList();
  }

  @Test
  void theDefaultsAreValidAndDeclareNoStream() {
    assertThat(problems("")).isEmpty();
    NatsSinkSettings s =
        SettingsReader.settings(
            SinkContexts.context("nats", ""), NatsSinkSettings::read, "nats sink");
    assertThat(s.servers()).containsExactly("nats://127.0.0.1:4222");
    assertThat(s.publishTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.maxPending()).isEqualTo(1000);
    assertThat(s.stream()).isNull();
  }

  @Test
  void aBadStreamValueIsReportedEvenWhenNoStreamIsDeclared() {
    assertThat(problems("stream { replicas = 7, storage = disk }"))
        .containsExactlyInAnyOrder(
            PATH + ".stream.storage: must be one of file | memory, not \"disk\"",
            PATH + ".stream.replicas: must be in [1, 5], not 7");
  }

  @Test
  void everyBadValueIsReportedAtOnceWithItsKeyPath() {
    assertThat(
            problems(
                """
                url = "http://host:4222"
                publish-timeout = fast
                connection-timeout = 0s
                max-pending = 0
                stream { name = "a.b", subjects = [], storage = disk, duplicate-window = 0s,
                         replicas = 7 }
                """))
        .containsExactlyInAnyOrder(
            PATH
                + ".url: must start with nats://, tls://, ws:// or wss://, got \"http://host:4222\"",
            PATH + ".publish-timeout: \"fast\" is not a duration such as 500ms, 30s or 5m",
            PATH + ".connection-timeout: must be a positive duration, not \"0s\"",
            PATH + ".max-pending: must be in [1, 1000000], not 0",
            PATH
                + ".stream.name: must use only letters, digits, _ and - (no dots, spaces or"
                + " wildcards), not \"a.b\"",
            PATH + ".stream.subjects: must list at least one subject, such as [\"outbox.>\"]",
            PATH + ".stream.storage: must be one of file | memory, not \"disk\"",
            PATH + ".stream.duplicate-window: must be a positive duration, not \"0s\"",
            PATH + ".stream.replicas: must be in [1, 5], not 7");
  }

  @Test
  void aTokenInTheUrlIsRefusedWithoutShowingIt() {
    assertThat(problems("url = \"nats://s3cr3t-token@host:4222\""))
        .singleElement()
        .asString()
        .contains("token = ...")
        .doesNotContain("s3cr3t");
  }

  @Test
  void passwordsAndTokensAreNeverShown() {
    NatsSinkSettings s =
        SettingsReader.settings(
            SinkContexts.context(
                "nats", "url = \"nats://relay:pw1@a:4222, nats://relay:pw2@b:4222\", token = tk"),
            NatsSinkSettings::read,
            "nats sink");
    assertThat(s.servers()).hasSize(2);
    assertThat(s.toString())
        .contains("nats://relay:****@a:4222", "nats://relay:****@b:4222")
        .doesNotContain("pw1", "pw2", "tk,");
    assertThat(problems("url = \"nats://relay:pw1@a:4222, ftp://relay:pw2@b\""))
        .singleElement()
        .asString()
        .doesNotContain("pw2");
    assertThatThrownBy(
            () ->
                SettingsReader.settings(
                    SinkContexts.context("nats", "max-pending = x"),
                    NatsSinkSettings::read,
                    "nats sink"))
        .hasMessageContaining(PATH + ".max-pending");
  }

  @Test
  void onlyTheTokenIsASecretKey() {
    SecretKeyAnswers.of(new NatsSinkProvider().secretKeys())
        .secret("token")
        .notSecret("url", "stream.name");
  }
}
