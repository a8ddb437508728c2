package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Ticker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsReaderTest {

  private static final String PATH = "pipelines.p.sink.foo";

  private static SettingsReader reader(String hocon) {
    return new SettingsReader(
        new PluginContext(
            "p",
            ConfigFactory.parseString(hocon),
            PATH,
            1,
            10,
            Clock.systemUTC(),
            Ticker.SYSTEM,
            r -> {}));
  }

  private static List<String> texts(SettingsReader read) {
    return read.problems().stream().map(p -> p.path() + ": " + p.message()).toList();
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
        .contains("must be a list of subjects such as [\"outbox.>\"], not 3")
        .contains("is required: a list of topics such as [\"t\"]");
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
  }

  @Test
  void typedValuesAreReadOnceAndEachBadOneIsAProblemNamingItsValue() {
    SettingsReader read =
        reader(
            "n = 5, big = 70000, frac = 1.5, word = many, d = 2s, short = 5ms, neg = -1s,"
                + " off = off, zero = 0, kind = Mark, bad-kind = archive, on = true, yes = maybe");
    assertThat(read.intIn("n", 1, 10)).isEqualTo(5);
    assertThat(read.positiveDuration("d")).hasSeconds(2);
    assertThat(read.durationOrOff("off", java.time.Duration.ofSeconds(1))).isZero();
    assertThat(read.durationOrOff("zero", java.time.Duration.ofSeconds(1))).isZero();
    assertThat(read.oneOf("kind", "mark", "delete")).isEqualTo("mark");
    assertThat(read.bool("on")).isTrue();
    assertThat(read.ok()).isTrue();

    assertThat(read.intIn("big", 0, 65535)).isNull();
    assertThat(read.intIn("frac", 1, 10)).isNull();
    assertThat(read.positive("word")).isNull();
    assertThat(read.duration("short", java.time.Duration.ofSeconds(1))).isNull();
    assertThat(read.positiveDuration("neg")).isNull();
    assertThat(read.oneOf("bad-kind", "mark", "delete")).isNull();
    assertThat(read.bool("yes")).isNull();
    assertThat(read.positiveDuration("missing")).isNull();
    assertThat(read.ok()).isFalse();
    assertThat(texts(read))
        .containsExactly(
            PATH + ".big: must be in [0, 65535], not 70000",
            PATH + ".frac: must be a whole number, not 1.5",
            PATH + ".word: must be >= 1, not \"many\"".replace(">= 1", "a whole number"),
            PATH + ".short: must be at least 1s, not \"5ms\"",
            PATH + ".neg: must be a positive duration, not \"-1s\"",
            PATH + ".bad-kind: must be one of mark | delete, not \"archive\"",
            PATH + ".yes: must be true or false, not \"maybe\"",
            PATH + ".missing: is required: a duration such as 500ms, 30s or 5m");
  }

  @Test
  void aProblemPointsAtTheFileAndLineTheValueWasWrittenOn(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("relay.conf");
    Files.writeString(file, "a = 1\nlanes = x\n");
    SettingsReader read =
        new SettingsReader(
            new PluginContext(
                "p",
                ConfigFactory.parseFile(file.toFile()),
                PATH,
                1,
                10,
                Clock.systemUTC(),
                Ticker.SYSTEM,
                r -> {}));
    read.positive("lanes");
    assertThat(read.problems())
        .singleElement()
        .hasToString(PATH + ".lanes: must be a whole number, not \"x\" (" + file + ":2)");
  }

  @Test
  void aSecretIsShownAsTheMaskSays() {
    java.util.List<SettingsProblem> sunk = new java.util.ArrayList<>();
    SettingsReader read =
        new SettingsReader(
            ConfigFactory.parseString("password = [1], url = \"a://u:pw@h\""),
            "base",
            sunk::add,
            null,
            (path, value) -> path.endsWith("password") ? "******" : value.replace("pw", "**"));
    read.intIn("url", 1, 2);
    read.intIn("password", 1, 2);
    assertThat(sunk)
        .extracting(SettingsProblem::message)
        .containsExactly(
            "must be a whole number, not \"a://u:**@h\"", "must be a whole number, not a list");
  }

  @Test
  void aPluginsSettingsComeFromItsOneReadOrEveryProblemIsListed() {
    java.util.function.Function<SettingsReader, String> read =
        r -> {
          Integer size = r.intIn("size", 1, 10);
          String name = r.string("name");
          return r.ok() ? name + size : null;
        };
    PluginContext good =
        new PluginContext(
            "p",
            ConfigFactory.parseString("size = 3, name = x"),
            PATH,
            1,
            10,
            Clock.systemUTC(),
            Ticker.SYSTEM,
            r -> {});
    PluginContext bad =
        new PluginContext(
            "p",
            ConfigFactory.parseString("size = 30"),
            PATH,
            1,
            10,
            Clock.systemUTC(),
            Ticker.SYSTEM,
            r -> {});
    assertThat(SettingsReader.settings(good, read, "foo sink")).isEqualTo("x3");
    assertThat(SettingsReader.problems(good, read)).isEmpty();
    assertThat(SettingsReader.problems(bad, read)).hasSize(2);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> SettingsReader.settings(bad, read, "foo sink"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid foo sink settings")
        .hasMessageContaining(PATH + ".size: must be in [1, 10], not 30")
        .hasMessageContaining(PATH + ".name: is required");
  }

  @Test
  void aMapOfSettingsIsFlattenedWithDots() {
    SettingsReader read = reader("m { a = 1, ssl { mode = x } }, l { a = [1] }, s = 3");
    assertThat(read.stringMap("m"))
        .containsExactly(java.util.Map.entry("a", "1"), java.util.Map.entry("ssl.mode", "x"));
    assertThat(read.stringMap("unset")).isEmpty();
    assertThat(read.ok()).isTrue();
    assertThat(read.stringMap("l")).isNull();
    assertThat(read.stringMap("s")).isNull();
    assertThat(texts(read))
        .containsExactly(
            PATH + ".l.\"a\": must be a single value, not a list",
            PATH + ".s: must be an object of settings, not 3");
  }
}
