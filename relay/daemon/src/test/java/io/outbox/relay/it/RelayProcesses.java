package io.outbox.relay.it;

import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Teardown;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts {@link RelayProcess}es for one test and makes sure none outlives it: after each test every
 * process still running is killed, and when the test failed the tail of each log is printed. (A
 * shutdown hook of {@link RelayProcess} kills them too, should the test JVM stop first.) It also
 * closes what the test opened through {@link #closeAfter}, the last opened first; the processes are
 * killed in that order where the first was started, so after the load written while they ran and
 * before the fixture, proxies and brokers they used.
 *
 * <pre>{@code
 * @RegisterExtension final RelayProcesses relays = new RelayProcesses();
 * ...
 * fx = relays.closeAfter(new RelayFixture("purpose"));
 * }</pre>
 */
final class RelayProcesses implements BeforeEachCallback, AfterEachCallback {
  private static final int TAIL_LINES = 60;

  private final List<RelayProcess> started = new CopyOnWriteArrayList<>();
  private final Teardown teardown = new Teardown();
  private boolean killInTeardown;
  private Path dir;

  @Override
  public void beforeEach(ExtensionContext context) {
    String test =
        context.getRequiredTestClass().getSimpleName()
            + "-"
            + context.getRequiredTestMethod().getName()
            + "-"
            + System.currentTimeMillis();
    dir = Path.of("target", "relay-processes", test).toAbsolutePath();
  }

  /** Starts {@code outbox-relay run} with this configuration; its files go under target/. */
  RelayProcess start(String name, String hocon) {
    return start(name, hocon, Map.of(), "run");
  }

  /** Starts {@code outbox-relay <command...> --config FILE} with extra environment variables. */
  RelayProcess start(
      String name, String hocon, Map<String, String> environment, String... command) {
    if (!killInTeardown) {
      killInTeardown = true;
      teardown.add(this::killAll);
    }
    RelayProcess p = RelayProcess.start(name, dir, hocon, environment, command);
    started.add(p);
    return p;
  }

  /** Closes {@code resource} after the test, before everything opened earlier; returns it. */
  <T extends AutoCloseable> T closeAfter(T resource) {
    return teardown.add(resource);
  }

  /** Kills every process of this test that is still running (SIGKILL). */
  void killAll() {
    for (RelayProcess p : started) {
      if (p.isAlive()) {
        p.kill9();
      }
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    try {
      teardown.closeAll();
    } finally {
      killAll();
      if (context.getExecutionException().isPresent()) {
        for (RelayProcess p : started) {
          System.err.printf(
              "---- last %d log lines of %s ----%n%s%n", TAIL_LINES, p, p.tail(TAIL_LINES));
        }
      }
      started.clear();
      killInTeardown = false;
    }
  }
}
