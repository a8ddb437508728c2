package io.outbox.soak;

import io.outbox.soak.InvariantChecker.Violation;
import io.outbox.testkit.FaultProxy;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Draws a fault every {@code interval} from {@link FaultKind} (uniformly, with a seeded random),
 * applies it and heals it before the next one: one fault at a time, so that what follows a fault (a
 * take-over, duplicates) can be charged to it. A fault aimed at one relay hits the active one three
 * times in four. Or, given a fixed order, those faults one after the other, each at the shortest of
 * its range and aimed at the active relay. Before each fault, a relay that exited by itself is
 * noted as a violation and started again.
 */
final class FaultInjector {
  private static final Logger log = LoggerFactory.getLogger(FaultInjector.class);
  static final String RELAY_EXIT = "relay-exit";
  static final String NO_PROGRESS = "no-progress";
  static final Duration RECOVERY = Duration.ofSeconds(90);

  /** At least this long between a heal and the next fault: a woken relay's late sends land. */
  private static final Duration SETTLE = Duration.ofSeconds(2);

  private final Random random;
  private final RelayPair relays;
  private final SoakBroker broker;
  private final Duration interval;
  private final List<FaultKind> order;
  private final List<FaultKind> kinds;
  private final List<FaultRecord> faults = new ArrayList<>();
  private final List<Violation> violations = new ArrayList<>();

  /**
   * @param kinds the faults drawn from
   * @param order empty to draw each fault; else these, in this order, each at the shortest of its
   *     range and aimed at the active relay, and no more after them
   */
  FaultInjector(
      Random random,
      RelayPair relays,
      SoakBroker broker,
      Duration interval,
      List<FaultKind> kinds,
      List<FaultKind> order) {
    this.random = random;
    this.relays = relays;
    this.broker = broker;
    this.interval = interval;
    this.kinds = List.copyOf(kinds);
    this.order = List.copyOf(order);
  }

  /**
   * Injects faults until {@code deadline} (or until the fixed order is done); the last one is
   * healed when this returns.
   */
  void runUntil(Instant deadline) {
    Instant next = Instant.now().plus(interval);
    while (next.isBefore(deadline) && (order.isEmpty() || faults.size() < order.size())) {
      Waits.pause(Duration.between(Instant.now(), next));
      noteUnexpectedExits();
      FaultRecord f = inject(faults.size() + 1);
      Instant healed = f.end();
      if (!Waits.holdsWithin(RECOVERY, () -> relays.publishedSince(healed))) {
        String stall = "nothing published within " + RECOVERY.toSeconds() + " s of the heal";
        f = f.withDetail(f.detail() + "; " + stall);
        violations.add(new Violation(NO_PROGRESS, stall + " of fault " + f.label()));
      }
      faults.add(f);
      log.info(
          "soak: fault {} ({}), healed after {} ms",
          f.label(),
          f.detail(),
          Duration.between(f.start(), f.end()).toMillis());
      Instant earliest = f.start().plus(interval);
      Instant settled = f.end().plus(SETTLE);
      next = earliest.isAfter(settled) ? earliest : settled;
    }
  }

  /** Relays that exited by themselves are violations; they are started again. */
  void noteUnexpectedExits() {
    for (String exit : relays.restartUnexpectedExits()) {
      log.warn("soak: {}", exit);
      violations.add(new Violation(RELAY_EXIT, exit));
    }
  }

  private FaultInjector.Target target(FaultKind kind) {
    if (!kind.targetsOneRelay()) {
      return new Target(
          null,
          kind == FaultKind.BROKER_RESTART || kind == FaultKind.BROKER_KILL
              ? "broker"
              : "both relays");
    }
    Optional<String> active = relays.active();
    boolean hitActive = !order.isEmpty() || random.nextInt(4) < 3;
    String name;
    if (active.isPresent()) {
      name = hitActive ? active.get() : other(active.get());
    } else {
      name = random.nextBoolean() ? "a" : "b";
    }
    String role = active.isEmpty() ? "no lease" : name.equals(active.get()) ? "active" : "standby";
    return new Target(name, name + " (" + role + ")");
  }

  private record Target(String relay, String label) {}

  private static String other(String name) {
    return name.equals("a") ? "b" : "a";
  }

  private FaultRecord inject(int number) {
    FaultKind kind =
        order.isEmpty() ? kinds.get(random.nextInt(kinds.size())) : order.get(number - 1);
    Target target = target(kind);
    Instant start = Instant.now();
    String detail =
        switch (kind) {
          case SIGKILL -> {
            relays.kill9AndRestart(target.relay());
            yield "restarted at once";
          }
          case SIGTERM -> {
            Optional<Integer> code = relays.terminateAndRestart(target.relay());
            long ms = Duration.between(start, Instant.now()).toMillis();
            if (code.isEmpty() || code.get() != 0) {
              violations.add(
                  new Violation(
                      RELAY_EXIT,
                      "relay "
                          + target.relay()
                          + " did not exit 0 within a minute of SIGTERM (fault #"
                          + number
                          + "): "
                          + code.map(c -> "exit " + c).orElse("killed")));
            }
            yield code.map(c -> "exit " + c).orElse("no exit, killed")
                + " after "
                + ms
                + " ms, restarted";
          }
          case SIGSTOP -> {
            Duration frozen = seconds(5, 30);
            relays.process(target.relay()).freeze();
            Waits.pause(frozen);
            relays.process(target.relay()).thaw();
            yield "frozen " + frozen.toSeconds() + " s";
          }
          case TERMINATE_SESSIONS -> {
            try {
              yield relays.terminateSessions() + " session(s) ended";
            } catch (SQLException e) {
              yield "could not end sessions: " + e.getMessage();
            }
          }
          case BROKER_RESTART -> {
            Duration down = seconds(3, 15);
            broker.stop();
            Waits.pause(down);
            int starts = restartBroker();
            yield "down "
                + down.toSeconds()
                + " s, up again after "
                + Duration.between(start, Instant.now()).toSeconds()
                + " s"
                + (starts > 1 ? " (" + starts + " starts)" : "");
          }
          case BROKER_KILL -> {
            broker.kill();
            int starts = restartBroker();
            yield "killed, up again after "
                + Duration.between(start, Instant.now()).toSeconds()
                + " s"
                + (starts > 1 ? " (" + starts + " starts)" : "");
          }
          case DATABASE_BLACKHOLE -> {
            Duration cut = seconds(5, 30);
            FaultProxy proxy = relays.proxy(target.relay());
            proxy.set(FaultProxy.Mode.BLACKHOLE);
            Waits.pause(cut);
            proxy.set(FaultProxy.Mode.PASS);
            yield "cut off " + cut.toSeconds() + " s";
          }
        };
    return new FaultRecord(number, kind, target.label(), start, Instant.now(), detail, null);
  }

  /**
   * Starts the broker again; a start that does not answer in time (seen at load 25, where the
   * broker took over three minutes) is tried again rather than leaving the soak without a broker.
   *
   * @return how many starts it took
   */
  private int restartBroker() {
    for (int start = 1; ; start++) {
      try {
        broker.restart();
        return start;
      } catch (RuntimeException e) {
        if (start == 3) {
          throw e;
        }
        log.warn("soak: the broker did not come back ({}); starting it again", e.getMessage());
      }
    }
  }

  private Duration seconds(int min, int max) {
    if (!order.isEmpty()) {
      return Duration.ofSeconds(min);
    }
    return Duration.ofSeconds(min + random.nextInt(max - min + 1));
  }

  /**
   * The faults injected, each with the time until a relay logged "active" again before the next
   * fault (or {@code until} for the last).
   */
  List<FaultRecord> faults(Instant until) {
    List<FaultRecord> out = new ArrayList<>();
    for (int i = 0; i < faults.size(); i++) {
      FaultRecord f = faults.get(i);
      Instant end = i + 1 < faults.size() ? faults.get(i + 1).start() : until;
      out.add(f.withActiveAgain(relays.activeAgain(f.start(), end).orElse(null)));
    }
    return out;
  }

  /**
   * Relays that exited by themselves or not cleanly on SIGTERM, and faults after which the relays
   * published nothing for {@link #RECOVERY} while the writers wrote.
   */
  List<Violation> violations() {
    return List.copyOf(violations);
  }
}
