package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class SettingsReaderTest {

  private static final String PATH = "pipelines.p.sink.foo";

  private static SettingsReader reader(String hocon) {
    return new SettingsReader(
        new PluginContext(
            "p", ConfigFactory.parseString(hocon), PATH, 1, 10, Clock.systemUTC(), r -> {}));
  }

  private static List<String> texts(SettingsReader read) {
    return read.problems().stream().map(SettingsProblem::toString).toList();
  }

  @Test
  void namesMustBeANonEmptyListWithoutBlanks() {
    SettingsReader read = reader("a = [\"x.>\", \"y\"], b = [], c = [\"\", \"has space\"], d = 3");
    assertThat(read.names("a", "subject", "[\"outbox.>\"]")).containsExactly("x.>", "y");
    assertThat(read.problems()).isEmpty();
    assertThat(read.names("b", "subject", "[\"outbox.>\"]")).isEmpty();
    assertThat(read.names("c", "subject", "[\"outbox.>\"]")).hasSize(2);
    assertThat(read.names("d", "subject", "[\"outbox.>\"]")).isNull();
    assertThat(read.names("missing", "topic", "[\"t\"]")).isNull();
    assertThat(read.problems())
        .extracting(SettingsProblem::path)
        .containsExactly(PATH + ".b", PATH + ".c", PATH + ".c", PATH + ".d", PATH + ".missing");
    assertThat(String.join("\n", texts(read)))
        .contains("must list at least one subject, such as [\"outbox.>\"]")
        .contains("a subject must not be empty or hold spaces: \"\"")
        .contains("a subject must not be empty or hold spaces: \"has space\"")
        .contains("must be a list of subjects such as [\"outbox.>\"], got 3")
        .contains("must be a list of topics such as [\"t\"]");
  }

  @Test
  void urlsAreSplitAtCommasAndEachRefusedOneIsAProblem() {
    SettingsReader read =
        reader("ok = \"a://h1, a://h2\", bad = \"a://h1, b://x, c://y\", none = \" , \"");
    java.util.function.Function<String, String> check =
        u -> u.startsWith("a://") ? null : "must start with a://, got \"" + u + "\"";
    assertThat(read.urls("ok", check)).containsExactly("a://h1", "a://h2");
    assertThat(read.problems()).isEmpty();
    assertThat(read.urls("bad", check)).hasSize(3);
    assertThat(read.urls("none", check)).isEmpty();
    assertThat(read.urls("missing", check)).isNull();
    assertThat(read.problems())
        .extracting(SettingsProblem::path)
        .containsExactly(PATH + ".bad", PATH + ".bad", PATH + ".none", PATH + ".missing");
    assertThat(String.join("\n", texts(read)))
        .contains("got \"b://x\"")
        .contains("got \"c://y\"")
        .contains("must name at least one URL");
  }

  @Test
  void anOptionalStringIsCheckedOnlyWhenSet() {
    SettingsReader read = reader("token = tk, bad = [1]");
    assertThat(read.optionalString("token")).isEqualTo("tk");
    assertThat(read.optionalString("unset")).isNull();
    assertThat(read.problems()).isEmpty();
    assertThat(read.optionalString("bad")).isNull();
    assertThat(read.problems()).extracting(SettingsProblem::path).containsExactly(PATH + ".bad");
    assertThat(SettingsReader.stringOrNull(ConfigFactory.parseString("t = x"), "t")).isEqualTo("x");
    assertThat(SettingsReader.stringOrNull(ConfigFactory.parseString("t = x"), "u")).isNull();
  }
}
