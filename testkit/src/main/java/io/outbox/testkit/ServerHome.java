package io.outbox.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a private server ({@link PrivateKafka}, {@link PrivatePostgres}, {@link PrivateRabbit},
 * {@link PrivateServer}) holds on this machine while a test uses it: a temporary directory of its
 * own, and a shutdown hook that ends the server should the test JVM exit without closing it. {@link
 * #close(Runnable)} gives both back, once. Not thread-safe: its server calls it under its own lock.
 */
final class ServerHome {

  private final String name;
  private final Path dir;
  private Thread reaper;
  private boolean closed;

  private ServerHome(String name, Path dir) {
    this.name = name;
    this.dir = dir;
  }

  /** A fresh directory {@code outbox-private-<name>-...} in the system's temporary directory. */
  static ServerHome create(String name) {
    try {
      return new ServerHome(name, Files.createTempDirectory("outbox-private-" + name + "-"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for a private " + name, e);
    }
  }

  Path dir() {
    return dir;
  }

  /** Has {@code end} (a forcible stop) run when the JVM exits before {@link #close(Runnable)}. */
  void reapWith(Runnable end) {
    reaper = new Thread(end, "private-" + name + "-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
  }

  /** Whether {@link #close(Runnable)} ran. */
  boolean closed() {
    return closed;
  }

  /**
   * Stops the server with {@code stop}, releases the shutdown hook and deletes the directory; does
   * nothing when closed already.
   */
  void close(Runnable stop) {
    if (closed) {
      return;
    }
    closed = true;
    stop.run();
    if (reaper != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(reaper);
      } catch (IllegalStateException e) {
        // The JVM is shutting down: the hook runs anyway.
      }
    }
    Directories.deleteRecursively(dir);
  }
}
