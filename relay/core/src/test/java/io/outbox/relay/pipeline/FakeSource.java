package io.outbox.relay.pipeline;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Source;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** An in-memory source with the polling source's rules: lanes by key, retries hold the key. */
final class FakeSource implements Source {
  private final int lanes;
  private final TreeMap<Long, OutboxEvent> pending = new TreeMap<>();
  private final Map<Long, Long> retryAtNanos = new HashMap<>();
  private final Set<Long> inFlight = new HashSet<>();
  final List<Settlement> settled = new CopyOnWriteArrayList<>();
  volatile boolean closed;

  /** Exactly-once tests: the watermark the source keeps ({@code null}: none, like CDC). */
  volatile io.outbox.relay.spi.LedgerWatermark watermark;

  volatile boolean claimsAhead = true;

  /** What {@link Claim#owned()} answers: false makes every claim unpublishable. */
  volatile boolean owned = true;

  /** Run on the calling thread at the start of every activation, claim, backlog read and close. */
  volatile Runnable onCall = () -> {};

  /** Thrown by the next claim, when set. */
  volatile Error claimError;

  /** Whether {@link #yieldLeadership} gives the role up (and claims then stop being owned). */
  volatile boolean yields;

  /**
   * Whether the role comes back at the next activation after a yield (the standby handed it back).
   */
  volatile boolean handedBack;

  final List<String> yieldedBecause = new CopyOnWriteArrayList<>();
  final java.util.concurrent.atomic.AtomicInteger activations =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * When set, dead letters are not moved but kept as retries with this error, as a failing move.
   */
  volatile String deadLetterMoveFailure;

  final java.util.concurrent.atomic.AtomicInteger claimedAhead =
      new java.util.concurrent.atomic.AtomicInteger();

  /** The claims made, in order (for a test that disowns one of them). */
  private final List<FakeClaim> made = new CopyOnWriteArrayList<>();

  FakeSource(int lanes, List<OutboxEvent> events) {
    this.lanes = lanes;
    events.forEach(e -> pending.put(e.id(), e));
  }

  /** The {@code n}-th claim with events made (from 0) is no longer owned, the others still are. */
  void disownClaim(int n) {
    made.get(n).disowned = true;
  }

  /** How many claims with events were made. */
  int claimsMade() {
    return made.size();
  }

  /**
   * As a watermark settles a committed ledger record: the events still pending and not claimed are
   * marked published, without a claim.
   *
   * @return how many were
   */
  synchronized int settleFromLedger(List<io.outbox.relay.spi.LedgerRecord.Event> events) {
    int rows = 0;
    for (io.outbox.relay.spi.LedgerRecord.Event e : events) {
      OutboxEvent event = pending.get(e.id());
      if (event != null && !inFlight.contains(e.id())) {
        pending.remove(e.id());
        settled.add(new Settlement.Published(event));
        rows++;
      }
    }
    return rows;
  }

  synchronized int pendingCount() {
    return pending.size();
  }

  @Override
  public void activate() throws InterruptedException {
    onCall.run();
    activations.incrementAndGet();
    if (handedBack) {
      owned = true;
    }
    if (!owned) {
      Thread.sleep(50); // a standby's wait, shortened
    }
  }

  @Override
  public boolean yieldLeadership(Duration pause, String why) {
    yieldedBecause.add(why);
    if (yields) {
      owned = false;
    }
    return yields;
  }

  @Override
  public Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    onCall.run();
    Error error = claimError;
    if (error != null) {
      throw error;
    }
    List<OutboxEvent> batch = take(lane, maxEvents);
    if (batch.isEmpty()) {
      Thread.sleep(Math.min(20, maxWait.toMillis()));
    }
    return made(batch);
  }

  private FakeClaim made(List<OutboxEvent> batch) {
    FakeClaim c = new FakeClaim(batch);
    if (!batch.isEmpty()) {
      made.add(c);
    }
    return c;
  }

  @Override
  public Claim claimAhead(int lane, int maxEvents, Claim inFlight) {
    if (!claimsAhead) {
      return Claim.empty();
    }
    List<OutboxEvent> batch = take(lane, maxEvents);
    if (!batch.isEmpty()) {
      claimedAhead.incrementAndGet();
    }
    return made(batch);
  }

  private List<OutboxEvent> take(int lane, int maxEvents) {
    List<OutboxEvent> batch = new ArrayList<>();
    synchronized (this) {
      Set<AggregateKey> held = new HashSet<>();
      long now = System.nanoTime();
      for (OutboxEvent e : pending.values()) {
        if (batch.size() == maxEvents) {
          break;
        }
        if (e.key().lane(lanes) != lane || inFlight.contains(e.id())) {
          continue;
        }
        Long at = retryAtNanos.get(e.id());
        if (at != null && at - now > 0) {
          held.add(e.key());
          continue;
        }
        if (!held.contains(e.key())) {
          batch.add(e);
        }
      }
      batch.forEach(e -> inFlight.add(e.id()));
    }
    return batch;
  }

  @Override
  public Optional<Backlog> backlog() {
    onCall.run();
    return Optional.empty();
  }

  @Override
  public void close(Duration timeout) {
    onCall.run();
    closed = true;
  }

  private final class FakeClaim implements Claim {
    private final List<OutboxEvent> events;
    volatile boolean disowned;

    FakeClaim(List<OutboxEvent> events) {
      this.events = events;
    }

    @Override
    public List<OutboxEvent> events() {
      return events;
    }

    @Override
    public boolean owned() {
      return owned && !disowned;
    }

    @Override
    public Settled settle(
        List<Settlement> settlements, io.outbox.relay.spi.LedgerPosition position) {
      if (watermark == null) {
        throw new UnsupportedOperationException("no ledger watermark");
      }
      return settle(settlements); // the fake keeps no watermark of its own
    }

    @Override
    public Settled settle(List<Settlement> settlements) {
      String moveFailure = deadLetterMoveFailure;
      List<Settlement.Retry> kept = new ArrayList<>();
      if (moveFailure != null) {
        List<Settlement> recorded = new ArrayList<>();
        for (Settlement s : settlements) {
          if (s instanceof Settlement.DeadLetter d) {
            Settlement.Retry r =
                new Settlement.Retry(d.event(), d.attempts(), Duration.ofMillis(50), moveFailure);
            kept.add(r);
            recorded.add(r);
          } else {
            recorded.add(s);
          }
        }
        settlements = recorded;
      }
      record(settlements);
      return new Settled(kept);
    }

    private void record(List<Settlement> settlements) {
      synchronized (FakeSource.this) {
        for (Settlement s : settlements) {
          long id = s.event().id();
          inFlight.remove(id);
          settled.add(s);
          if (s instanceof Settlement.Published || s instanceof Settlement.DeadLetter) {
            pending.remove(id);
          } else if (s instanceof Settlement.Retry r) {
            pending.put(id, r.event().withAttempts(r.attempts()));
            retryAtNanos.put(id, System.nanoTime() + r.delay().toNanos());
          }
        }
      }
    }

    @Override
    public void release() {
      synchronized (FakeSource.this) {
        events.forEach(e -> inFlight.remove(e.id()));
      }
    }
  }

  @Override
  public java.util.Optional<io.outbox.relay.spi.LedgerWatermark> ledgerWatermark() {
    return java.util.Optional.ofNullable(watermark);
  }
}
