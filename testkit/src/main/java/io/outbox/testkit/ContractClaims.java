package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Source;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * How {@link SourceContract} claims from a source: every lane in turn, over as many claims as a
 * source that streams rows takes to hand them over, within the subclass's {@code appearWithin()}.
 */
final class ContractClaims {

  private final Source source;
  private final int lanes;
  private final Duration appearWithin;

  ContractClaims(Source source, int lanes, Duration appearWithin) {
    this.source = source;
    this.lanes = lanes;
    this.appearWithin = appearWithin;
  }

  /**
   * One claim per lane that together hold exactly {@code expected}: rounds whose claims hold fewer
   * (a source that streams rows may not have them all yet) are released and claimed again until
   * {@code appearWithin} passed. The claims returned are open; the caller ends them.
   */
  List<Claim> round(List<Long> expected) throws Exception {
    long deadline = System.nanoTime() + appearWithin.toNanos();
    List<Long> last = List.of();
    while (System.nanoTime() < deadline) {
      List<Claim> claims = new ArrayList<>();
      List<OutboxEvent> events = new ArrayList<>();
      for (int lane = 0; lane < lanes; lane++) {
        Claim claim = source.claim(lane, 100, Duration.ofMillis(100));
        claims.add(claim);
        events.addAll(claim.events());
      }
      last = ids(events);
      if (last.size() >= expected.size()) {
        assertThat(last).as("one round of claims").containsExactlyInAnyOrderElementsOf(expected);
        return claims;
      }
      claims.forEach(Claim::release);
    }
    throw new AssertionError(
        "no round of claims held " + expected + " within " + appearWithin + "; last: " + last);
  }

  /**
   * Claims every lane in turn until {@code expected} events came or {@code appearWithin} passed,
   * settling each claim as published; the events in the order claimed.
   */
  List<OutboxEvent> collect(int expected) throws InterruptedException {
    List<OutboxEvent> seen = new ArrayList<>();
    long deadline = System.nanoTime() + appearWithin.toNanos();
    while (seen.size() < expected && System.nanoTime() < deadline) {
      for (int lane = 0; lane < lanes; lane++) {
        Claim claim = source.claim(lane, 100, Duration.ofMillis(100));
        seen.addAll(claim.events());
        if (claim.events().isEmpty()) {
          claim.release();
        } else {
          publishAll(claim);
        }
      }
    }
    assertThat(seen).as("events claimed within %s", appearWithin).hasSize(expected);
    return seen;
  }

  /** What every lane's claims return for {@code period}; each claim is released. */
  List<OutboxEvent> quiet(Duration period) throws InterruptedException {
    List<OutboxEvent> seen = new ArrayList<>();
    long deadline = System.nanoTime() + period.toNanos();
    do {
      for (int lane = 0; lane < lanes; lane++) {
        Claim claim = source.claim(lane, 100, Duration.ofMillis(50));
        seen.addAll(claim.events());
        claim.release();
      }
    } while (System.nanoTime() < deadline);
    return seen;
  }

  static void publishAll(Claim claim) {
    claim.settle(settle(claim, Settlement.Published::new));
  }

  /** A settlement per event of {@code claim}, as {@code how} says. */
  static List<Settlement> settle(Claim claim, Function<OutboxEvent, Settlement> how) {
    return claim.events().stream().map(how).toList();
  }

  static List<Long> ids(List<OutboxEvent> events) {
    return events.stream().map(OutboxEvent::id).toList();
  }
}
