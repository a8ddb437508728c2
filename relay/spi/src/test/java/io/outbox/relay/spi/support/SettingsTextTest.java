package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsTextTest {

  /** A settings record of a made-up sink. */
  public record FooSettings(String url, String password, Duration timeout) {}

  @Test
  void printsLikeARecordWithTheSecretsReplaced() {
    FooSettings s = new FooSettings("foo://u:pw@h", "hunter2", Duration.ofSeconds(5));
    assertThat(
            SettingsText.of(
                s,
                Map.of(
                    "url",
                    BrokerUrls.mask(s.url(), false),
                    "password",
                    SettingsText.secret(s.password(), "none"))))
        .isEqualTo("FooSettings[url=foo://u:****@h, password=****, timeout=PT5S]");
  }

  @Test
  void anUnsetSecretIsShownAsSaid() {
    FooSettings s = new FooSettings("foo://h", null, Duration.ofSeconds(1));
    assertThat(SettingsText.of(s, Map.of("password", SettingsText.secret(null, "<from uri>"))))
        .isEqualTo(new FooSettings("foo://h", "<from uri>", Duration.ofSeconds(1)).toString());
  }
}
