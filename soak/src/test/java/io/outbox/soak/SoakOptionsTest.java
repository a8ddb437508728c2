package io.outbox.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SoakOptionsTest {
  private static final Path DEFAULT = Path.of("/tmp/soak-runs/now");

  private static SoakOptions parse(String... args) {
    return SoakOptions.parse(args, DEFAULT);
  }

  @Test
  void takesEveryOptionAndDefaultsTheRest() {
    SoakOptions o =
        parse(
            "--minutes",
            "1.5",
            "--source",
            "cdc",
            "--sink",
            "KAFKA",
            "--exactly-once",
            "--seed",
            "42",
            "--json",
            "--layout",
            "partitioned",
            "--dir",
            "/tmp/x");
    assertThat(o.duration()).isEqualTo(Duration.ofSeconds(90));
    assertThat(o.partitioned()).isTrue();
    assertThat(parse("--minutes", "1").partitioned()).isFalse();
    assertThat(o.source()).isEqualTo(SoakOptions.Source.CDC);
    assertThat(o.sink()).isEqualTo(SoakOptions.Sink.KAFKA);
    assertThat(o.exactlyOnce()).isTrue();
    assertThat(o.seed()).isEqualTo(42);
    assertThat(o.json()).isTrue();
    assertThat(o.directory()).isEqualTo(Path.of("/tmp/x"));
    assertThat(o.faultOrder()).isEmpty();
    assertThat(o.describe())
        .isEqualTo("90 s, cdc -> kafka (exactly once), partitioned outbox, seed 42");

    SoakOptions d = parse("--minutes", "10");
    assertThat(d.source()).isEqualTo(SoakOptions.Source.POLLING);
    assertThat(d.sink()).isEqualTo(SoakOptions.Sink.KAFKA);
    assertThat(d.exactlyOnce()).isFalse();
    assertThat(d.json()).isFalse();
    assertThat(d.directory()).isEqualTo(DEFAULT);
    assertThat(d.faultInterval()).isEqualTo(SoakOptions.FAULT_INTERVAL);
  }

  @Test
  void aWrongOrMissingOptionIsOneLineNamingIt() {
    assertThatThrownBy(() -> parse("--source", "cdc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--minutes");
    assertThatThrownBy(() -> parse("--minutes", "0"))
        .hasMessage("--minutes must be a number of minutes above 0 and at most 1440: 0.0");
    assertThatThrownBy(() -> parse("--minutes", "ten"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--minutes")
        .hasMessageContaining("ten");
    assertThatThrownBy(() -> parse("--minutes", "5", "--sink", "nats"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--sink")
        .hasMessageContaining("nats");
    assertThatThrownBy(() -> parse("--minutes", "5", "--frobnicate"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--frobnicate");
    assertThatThrownBy(() -> parse("--minutes", "5", "--sink", "rabbitmq", "--exactly-once"))
        .hasMessageContaining("--exactly-once needs --sink kafka");
  }
}
