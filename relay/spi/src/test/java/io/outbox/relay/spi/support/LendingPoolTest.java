package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LendingPoolTest {

  /** A fake connection: usable until broken. */
  static final class Conn {
    final int id;
    boolean broken;
    boolean closed;

    Conn(int id) {
      this.id = id;
    }
  }

  private final AtomicInteger opened = new AtomicInteger();
  private final List<Conn> closed = new ArrayList<>();
  private final LendingPool<Conn> pool =
      new LendingPool<>(
          "the Foo sink",
          2,
          c -> !c.broken,
          c -> {
            c.closed = true;
            closed.add(c);
          });

  private Conn borrow() throws InterruptedException {
    return pool.borrow(soon(), () -> new Conn(opened.incrementAndGet()));
  }

  private static Deadline soon() {
    return Ticker.SYSTEM.deadline(Duration.ofMillis(50));
  }

  @Test
  void lendsAtMostSizeAtOnceAndReusesAHealthyConnection() throws Exception {
    Conn a = borrow();
    Conn b = borrow();
    assertThat(borrow()).isNull(); // both lent: none came free before the deadline
    pool.giveBack(a, false);
    assertThat(borrow()).isSameAs(a);
    assertThat(opened).hasValue(2);
    pool.giveBack(b, false);
    pool.giveBack(a, false);
    assertThat(closed).isEmpty();
  }

  @Test
  void aBrokenOrUnusableConnectionIsClosedNotLentAgain() throws Exception {
    Conn a = borrow();
    pool.giveBack(a, true); // failed mid-batch
    assertThat(a.closed).isTrue();
    Conn b = borrow();
    assertThat(b).isNotSameAs(a);
    pool.giveBack(b, false);
    b.broken = true; // broke while idle
    Conn c = borrow();
    assertThat(c).isNotSameAs(b);
    assertThat(closed).containsExactly(a, b);
  }

  @Test
  void aFailedOpenFreesItsPlace() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(
              () ->
                  pool.borrow(
                      soon(),
                      () -> {
                        throw new IOException("refused");
                      }))
          .isInstanceOf(IOException.class);
    }
    assertThat(borrow()).isNotNull();
    assertThat(borrow()).isNotNull();
  }

  @Test
  void closeClosesTheIdleOnesAndLaterReturnsAndRefusesNewBorrows() throws Exception {
    Conn a = borrow();
    Conn b = borrow();
    pool.giveBack(a, false);
    pool.close();
    assertThat(a.closed).isTrue();
    pool.giveBack(b, false);
    assertThat(b.closed).isTrue();
    assertThatThrownBy(this::borrow)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("the Foo sink is closed");
    assertThatThrownBy(this::borrow).isInstanceOf(IllegalStateException.class); // place freed
  }
}
