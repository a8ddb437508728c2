package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Teardown;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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

  /** Starts {@code outbox-relay run} and waits up to {@code within} until it is the active one. */
  RelayProcess startActive(String name, String hocon, Duration within) {
    return startAwaiting(name, hocon, RelayFixture.ACTIVE, within);
  }

  /**
   * Starts {@code outbox-relay run} with the polling source and waits up to {@code within} until it
   * stands by for another instance.
   */
  RelayProcess startStandby(String name, String hocon, Duration within) {
    return startAwaiting(name, hocon, RelayFixture.STANDING_BY, within);
  }

  /**
   * Starts {@code outbox-relay run} and waits up to {@code within} until its log contains {@code
   * line}.
   */
  RelayProcess startAwaiting(String name, String hocon, String line, Duration within) {
    RelayProcess p = start(name, hocon);
    await().atMost(within).until(() -> p.logContains(line));
    return p;
  }

  /**
   * Starts relays {@code a} and {@code b} at once with the same configuration (one relay JVM start
   * less to wait for) and waits up to {@code within} until one is active and the other logged
   * {@code standingBy}; returns the active one first, then the one standing by.
   */
  RelayProcess[] startPair(String hocon, String standingBy, Duration within) {
    RelayProcess first = start("a", hocon);
    RelayProcess second = start("b", hocon);
    await()
        .atMost(within)
        .until(
            () ->
                first.logContains(RelayFixture.ACTIVE) || second.logContains(RelayFixture.ACTIVE));
    RelayProcess active = first.logContains(RelayFixture.ACTIVE) ? first : second;
    RelayProcess standby = active == first ? second : first;
    await().atMost(within).until(() -> standby.logContains(standingBy));
    assertThat(standby.log()).doesNotContain(RelayFixture.ACTIVE);
    return new RelayProcess[] {active, standby};
  }

  /**
   * Starts {@code outbox-relay run}, waits until it is the active one and until {@code fx}'s outbox
   * has {@code threshold} events published and at least {@code own} more than when the relay became
   * active, then kills it with SIGKILL; returns what was published at the kill, which must be fewer
   * than {@code events}. The count is read every few tens of milliseconds while thousands of events
   * a second go out, so a relay runs on past its threshold: {@code own} keeps one that ran far from
   * leaving the next nothing to do before its kill.
   */
  long killMidBacklog(
      String name, String hocon, RelayFixture fx, long threshold, long own, long events)
      throws java.sql.SQLException {
    RelayProcess relay = startActive(name, hocon, Duration.ofSeconds(60));
    fx.awaitPublishedMidway(Math.max(threshold, fx.published() + own));
    relay.kill9();
    long atKill = fx.published();
    assertThat(atKill).as("%s killed in the middle of the backlog", name).isLessThan(events);
    assertThat(relay.log())
        .as("SIGKILL: no shutdown hook ran")
        .doesNotContain("outbox-relay stopping");
    return atKill;
  }

  /**
   * Starts {@code outbox-relay run} after a crash, waits up to 90 s until {@code fx}'s outbox has
   * nothing unpublished, and asserts that it then stops with exit code 0 (within 30 s).
   */
  RelayProcess finish(String name, String hocon, RelayFixture fx) {
    RelayProcess p = start(name, hocon);
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    assertThat(p.terminate(Duration.ofSeconds(30))).contains(0);
    return p;
  }

  /**
   * Wakes the frozen {@code p} and waits up to 20 s until it logs, after the wake-up, that it lost
   * the active role.
   */
  static void thawAndAwaitLostActive(RelayProcess p) {
    Instant thawedAt = Instant.now();
    p.thaw();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> p.loggedAt("pipeline it: lost the active role", thawedAt).isPresent());
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
