package io.outbox.relay.config;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Writes config text to a file in a test's temp directory and loads it with the test plug-ins. */
final class ConfigFiles {

  /** A valid pipeline using the test plug-ins; tests add or override keys after it. */
  static final String ORDERS =
      """
      outbox-relay.pipelines.orders {
        database.url = "jdbc:postgresql://127.0.0.1:5432/app"
        source.type = fake
        sink.type = fake
      }
      """;

  private final Path dir;
  private final Map<String, String> environment;

  ConfigFiles(Path dir) {
    this(dir, Map.of());
  }

  ConfigFiles(Path dir, Map<String, String> environment) {
    this.dir = dir;
    this.environment = environment;
  }

  Path write(String text) {
    try {
      Path file = Files.createTempFile(dir, "relay", ".conf");
      Files.writeString(file, text);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  RelayConfigLoader loader() {
    ClassLoader cl = ConfigFiles.class.getClassLoader();
    return new RelayConfigLoader(environment, cl, Plugins.load(cl));
  }

  LoadedConfig load(String text) {
    return loader().load(write(text));
  }

  /** The problems of a config that must fail. */
  List<SettingsProblem> problems(String text) {
    Path file = write(text);
    ConfigProblemsException[] caught = new ConfigProblemsException[1];
    assertThatThrownBy(() -> loader().load(file))
        .isInstanceOfSatisfying(ConfigProblemsException.class, e -> caught[0] = e);
    return caught[0].problems();
  }
}
