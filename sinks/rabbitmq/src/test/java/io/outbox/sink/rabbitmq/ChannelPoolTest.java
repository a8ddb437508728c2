package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.io.IOException;
import java.lang.Thread.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** How the sink lends its confirm-mode channels, on channels without a broker. */
class ChannelPoolTest {

  private static final PublishChannel.Listener QUIET =
      new PublishChannel.Listener() {
        @Override
        public void missingExchange(String exchange) {}

        @Override
        public void refused() {}

        @Override
        public void accepted() {}

        @Override
        public void maxMessageSize(long bytes) {}
      };

  private final List<FakeChannel> opened = new ArrayList<>();
  private final ChannelPool pool = new ChannelPool(2, this::open);

  private PublishChannel open() throws IOException {
    FakeChannel fake = new FakeChannel();
    opened.add(fake);
    return PublishChannel.open(fake.connection, 10, QUIET);
  }

  private static Deadline soon() {
    return Ticker.SYSTEM.deadline(Duration.ofMillis(50));
  }

  @Test
  void lendsAtMostChannelsAtOnceAndReusesOpenOnesInTheOrderGivenBack() throws Exception {
    PublishChannel a = pool.borrow(soon());
    PublishChannel b = pool.borrow(soon());
    assertThat(pool.borrow(soon())).isNull(); // both lent: none came free before the deadline
    pool.giveBack(a);
    assertThat(pool.borrow(soon())).isSameAs(a);
    pool.giveBack(b);
    pool.giveBack(a);
    assertThat(pool.borrow(soon())).isSameAs(b);
    assertThat(pool.borrow(soon())).isSameAs(a);
    assertThat(opened).hasSize(2);
    assertThat(a.isUsable()).isTrue();
    assertThat(b.isUsable()).isTrue();
  }

  @Test
  void aChannelClosedWhileLentOrIdleIsDroppedAndAnotherOpened() throws Exception {
    PublishChannel a = pool.borrow(soon());
    opened.get(0).closeByBroker(404, "NOT_FOUND - no exchange 'x'");
    pool.giveBack(a); // closed while lent
    PublishChannel b = pool.borrow(soon());
    assertThat(b).isNotSameAs(a);
    pool.giveBack(b);
    opened.get(1).loseConnection(); // closed while idle
    PublishChannel c = pool.borrow(soon());
    assertThat(c).isNotIn(a, b);
    assertThat(c.isUsable()).isTrue();
    assertThat(opened).hasSize(3);
    assertThat(pool.borrow(soon())).isNotNull(); // the dropped ones gave their places back
  }

  @Test
  void aFailedOpenFreesItsPlace() throws Exception {
    ChannelPool refusing =
        new ChannelPool(
            2,
            () -> {
              throw new IOException("refused");
            });
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> refusing.borrow(soon()))
          .isInstanceOf(IOException.class)
          .hasMessage("refused");
    }
  }

  @Test
  void aNewChannelThatClosedAtOnceFailsTheBorrowAndFreesItsPlace() throws Exception {
    ChannelPool closing =
        new ChannelPool(
            1,
            () -> {
              PublishChannel pc = open();
              opened.get(opened.size() - 1).loseConnection();
              return pc;
            });
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(() -> closing.borrow(soon()))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("channel closed")
          .hasMessageContaining("CONNECTION_FORCED");
    }
  }

  /**
   * A closed channel given back while another sender waits: the pool opens a channel in its place
   * for the waiter; when that fails (the connection is gone), the sender giving back must not fail
   * for it.
   */
  @Test
  void givingBackAClosedChannelWhileOpeningFailsAndASenderWaitsDoesNotThrow() throws Exception {
    AtomicBoolean refuse = new AtomicBoolean();
    ChannelPool one =
        new ChannelPool(
            1,
            () -> {
              if (refuse.get()) {
                throw new IOException("refused");
              }
              return open();
            });
    PublishChannel lent = one.borrow(soon());
    FutureTask<PublishChannel> waiter =
        new FutureTask<>(() -> one.borrow(Ticker.SYSTEM.deadline(Duration.ofSeconds(1))));
    Thread waiting = new Thread(waiter, "waiting-sender");
    waiting.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> waiting.getState() == State.TIMED_WAITING);
    opened.get(0).loseConnection();
    refuse.set(true);

    one.giveBack(lent);

    assertThat(lent.isUsable()).isFalse();
    assertThat(waiter.get(10, TimeUnit.SECONDS)).isNull(); // none came free in time
  }

  @Test
  void closeClosesTheIdleOnesAndLaterReturnsAndRefusesNewBorrows() throws Exception {
    PublishChannel a = pool.borrow(soon());
    PublishChannel b = pool.borrow(soon());
    pool.giveBack(a);
    pool.close();
    assertThat(a.isUsable()).isFalse();
    assertThat(b.isUsable()).isTrue(); // still lent
    pool.giveBack(b);
    assertThat(b.isUsable()).isFalse();
    assertThatThrownBy(() -> pool.borrow(soon())).isInstanceOf(IllegalStateException.class);
  }
}
