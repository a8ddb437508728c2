package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packaged daemon ({@code target/outbox-relay.jar} and {@code target/lib/}, what {@code
 * ./outbox-relay} runs) holds every class the relay's own classes refer to. Tests run on Maven's
 * test class path, which can have a jar that lib/ lacks: jackson-databind, declared here with test
 * scope, once left lib/ without it and the CDC source failed with NoClassDefFoundError at run time
 * only.
 */
class PackagedClassPathIT {

  @Test
  void everyRelayClassLinksAgainstThePackagedLibraries() throws Exception {
    Path target = Path.of("target");
    List<Path> jars = new ArrayList<>();
    jars.add(target.resolve("outbox-relay.jar"));
    try (Stream<Path> lib = Files.list(target.resolve("lib"))) {
      lib.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(jars::add);
    }
    assertThat(jars.get(0)).exists();
    URL[] urls = new URL[jars.size()];
    for (int i = 0; i < urls.length; i++) {
      urls[i] = jars.get(i).toUri().toURL();
    }
    List<String> broken = new ArrayList<>();
    int checked = 0;
    // The platform loader as parent: nothing may come from the test class path.
    try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
      for (Path jar : jars) {
        if (!jar.getFileName().toString().startsWith("outbox-relay")) {
          continue;
        }
        for (String name : relayClasses(jar)) {
          checked++;
          try {
            Class<?> c = Class.forName(name, false, loader);
            // Resolves the types of fields and method signatures, as first use would.
            c.getDeclaredFields();
            c.getDeclaredMethods();
            c.getDeclaredConstructors();
          } catch (ClassNotFoundException | LinkageError e) {
            broken.add(name + ": " + e);
          }
        }
      }
    }
    assertThat(checked).as("relay classes checked").isGreaterThan(100);
    assertThat(broken).as("classes that cannot link against target/lib").isEmpty();
  }

  private static List<String> relayClasses(Path jar) throws IOException {
    List<String> names = new ArrayList<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      for (JarEntry e : java.util.Collections.list(file.entries())) {
        String n = e.getName();
        if (n.startsWith("io/outbox/") && n.endsWith(".class") && !n.contains("module-info")) {
          names.add(n.substring(0, n.length() - ".class".length()).replace('/', '.'));
        }
      }
    }
    return names;
  }
}
