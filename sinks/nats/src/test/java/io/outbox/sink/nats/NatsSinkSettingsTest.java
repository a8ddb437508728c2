package io.outbox.sink.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import io.outbox.testkit.SecretKeyAnswers;
import io.outbox.testkit.SinkContexts;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NatsSinkSettingsTest {

  private static final String PATH = SinkContexts.path("nats");

  private static List<String> problems(String hocon) {
    return NatsSinkSettings.validate(SinkContexts.context("nats", hocon)).stream()
        .map(SettingsProblem::toString)
        .toList();
  }

  @Test
  void theDefaultsAreValidAndDeclareNoStream() {
    assertThat(problems("")).isEmpty();
    NatsSinkSettings s = NatsSinkSettings.from(SinkContexts.context("nats", ""));
    assertThat(s.servers()).containsExactly("nats://127.0.0.1:4222");
    assertThat(s.publishTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.maxPending()).isEqualTo(1000);
    assertThat(s.stream()).isNull();
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
            PATH + ".publish-timeout: must be a duration such as 1s or 500ms, got \"fast\"",
            PATH + ".connection-timeout: must be at least 1ms, got \"0s\"",
            PATH + ".max-pending: must be between 1 and 1000000, got 0",
            PATH
                + ".stream.name: must use only letters, digits, _ and - (no dots, spaces or"
                + " wildcards), got \"a.b\"",
            PATH + ".stream.subjects: must list at least one subject, such as [\"outbox.>\"]",
            PATH + ".stream.storage: must be one of file | memory, got \"disk\"",
            PATH + ".stream.duplicate-window: must be at least 1ms, got \"0s\"",
            PATH + ".stream.replicas: must be between 1 and 5, got 7");
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
        NatsSinkSettings.from(
            SinkContexts.context(
                "nats", "url = \"nats://relay:pw1@a:4222, nats://relay:pw2@b:4222\", token = tk"));
    assertThat(s.servers()).hasSize(2);
    assertThat(s.toString())
        .contains("nats://relay:****@a:4222", "nats://relay:****@b:4222")
        .doesNotContain("pw1", "pw2", "tk,");
    assertThat(problems("url = \"nats://relay:pw1@a:4222, ftp://relay:pw2@b\""))
        .singleElement()
        .asString()
        .doesNotContain("pw2");
    assertThatThrownBy(() -> NatsSinkSettings.from(SinkContexts.context("nats", "max-pending = x")))
        .hasMessageContaining(PATH + ".max-pending");
  }

  @Test
  void onlyTheTokenIsASecretKey() {
    SecretKeyAnswers.of(new NatsSinkProvider().secretKeys())
        .secret("token")
        .notSecret("url", "stream.name");
  }
}
