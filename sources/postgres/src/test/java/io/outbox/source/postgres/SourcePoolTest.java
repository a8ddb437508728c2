package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class SourcePoolTest {

  private static final class Pool implements AutoCloseable {
    final AtomicBoolean closed = new AtomicBoolean();

    @Override
    public void close() {
      closed.set(true);
    }
  }

  private final List<Pool> opened = new ArrayList<>();
  private final SourcePool<Pool> pool =
      new SourcePool<>(
          "p",
          Duration.ofMillis(200),
          () -> {
            Pool p = new Pool();
            opened.add(p);
            return p;
          });

  @Test
  void noPoolBeforeTheFirstActivationAndOneAfter() {
    assertThat(pool.get()).isNull();
    Pool first = pool.open();
    assertThat(pool.open()).isSameAs(first);
    assertThat(pool.get()).isSameAs(first);
  }

  @Test
  void aLostLeaseClosesThePoolInUseAndPutsANewOneInItsPlace() {
    Pool first = pool.open();
    pool.leaseLost();
    assertThat(pool.get()).isNotSameAs(first);
    assertThat(first.closed).as("open for the grace, for claims that can still settle").isFalse();
    await().atMost(Duration.ofSeconds(5)).untilTrue(first.closed);
    assertThat(pool.get()).isNotNull().isNotSameAs(first);
    assertThat(pool.get().closed).isFalse();
    assertThat(pool.open()).isSameAs(pool.get());
  }

  @Test
  void aLostLeaseBeforeAnyActivationOpensNothing() {
    pool.leaseLost();
    assertThat(opened).isEmpty();
  }

  @Test
  void closedForGood() {
    Pool first = pool.open();
    pool.close();
    assertThat(first.closed).isTrue();
    assertThat(pool.get()).isNull();
    pool.leaseLost();
    assertThat(opened).hasSize(1);
    assertThatThrownBy(pool::open).isInstanceOf(IllegalStateException.class);
  }
}
