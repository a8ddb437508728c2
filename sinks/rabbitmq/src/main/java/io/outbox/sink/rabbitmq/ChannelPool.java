package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.Deadline;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * At most {@code channels} confirm-mode channels on the sink's connection, each lent to one sender
 * at a time. Channels are opened lazily; a closed one is dropped when it comes back or is next
 * taken, and a new one opened in its place (on a new connection if the old one is gone).
 */
final class ChannelPool {

  private final RabbitConnection connection;
  private final int maxUnconfirmed;
  private final PublishChannel.Listener listener;
  private final BlockingQueue<PublishChannel> idle = new LinkedBlockingQueue<>();
  private final Semaphore lent;
  private volatile boolean closed;

  ChannelPool(
      RabbitConnection connection,
      int channels,
      int maxUnconfirmed,
      PublishChannel.Listener listener) {
    this.connection = connection;
    this.maxUnconfirmed = maxUnconfirmed;
    this.listener = listener;
    this.lent = new Semaphore(channels);
  }

  /** A usable channel, or {@code null} when none became free before {@code deadline}. */
  PublishChannel borrow(Deadline deadline)
      throws IOException, TimeoutException, InterruptedException {
    if (!lent.tryAcquire(deadline.nanosLeft(), TimeUnit.NANOSECONDS)) {
      return null;
    }
    try {
      PublishChannel pc;
      while ((pc = idle.poll()) != null) {
        if (pc.isUsable()) {
          return pc;
        }
        pc.close();
      }
      return PublishChannel.open(connection.open(), maxUnconfirmed, listener);
    } catch (IOException | TimeoutException | RuntimeException e) {
      lent.release();
      throw e;
    }
  }

  /** Takes back a channel from {@link #borrow}. */
  void giveBack(PublishChannel pc) {
    if (pc.isUsable() && !closed) {
      idle.add(pc);
    } else {
      pc.close();
    }
    lent.release();
  }

  /** Closes the idle channels; channels still lent are closed when they come back. */
  void close() {
    closed = true;
    PublishChannel pc;
    while ((pc = idle.poll()) != null) {
      pc.close();
    }
  }
}
