package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.PendingBatch;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One channel in confirm mode and its unconfirmed messages, keyed by delivery tag. Confirms,
 * returns and the channel's closure arrive on the connection's thread and turn into verdicts; a
 * window of {@code max-unconfirmed} permits bounds what is in flight. Used by one sender at a time.
 */
final class PublishChannel {

  /** What a channel tells the sink besides verdicts; called on the connection's thread. */
  interface Listener {
    /** The broker said {@code exchange} does not exist. */
    void missingExchange(String exchange);

    /** The broker refused a message with basic.nack (back-pressure). */
    void refused();

    /** The broker confirmed a message with basic.ack. */
    void accepted();

    /** The broker closed the channel for a message body over its max_message_size. */
    void maxMessageSize(long bytes);
  }

  /** One published, unconfirmed message. */
  static final class Entry {
    final PendingBatch batch;
    final int index;
    final String exchange;
    final String routingKey;
    final String messageId;
    final int bodySize;
    volatile String returned; // set by basic.return, which precedes the message's basic.ack

    Entry(
        PendingBatch batch,
        int index,
        String exchange,
        String routingKey,
        String messageId,
        int bodySize) {
      this.batch = batch;
      this.index = index;
      this.exchange = exchange;
      this.routingKey = routingKey;
      this.messageId = messageId;
      this.bodySize = bodySize;
    }
  }

  private final Channel channel;
  private final Semaphore window;
  private final Listener listener;
  private final ConcurrentNavigableMap<Long, Entry> outstanding = new ConcurrentSkipListMap<>();
  private boolean dead; // guarded by this

  private PublishChannel(Channel channel, int maxUnconfirmed, Listener listener) {
    this.channel = channel;
    this.window = new Semaphore(maxUnconfirmed);
    this.listener = listener;
  }

  /** Opens a channel in confirm mode on {@code connection}, reporting to {@code listener}. */
  static PublishChannel open(Connection connection, int maxUnconfirmed, Listener listener)
      throws IOException {
    Channel channel = connection.createChannel();
    if (channel == null) {
      throw new IOException("RabbitMQ refused another channel (channel_max reached)");
    }
    channel.confirmSelect();
    PublishChannel pc = new PublishChannel(channel, maxUnconfirmed, listener);
    channel.addReturnListener(pc::returned);
    channel.addConfirmListener(pc::acked, pc::nacked);
    channel.addShutdownListener(pc::closed);
    return pc;
  }

  /** Waits for room in the window until {@code deadline}; {@code false} when there was none. */
  boolean acquire(Deadline deadline) throws InterruptedException {
    return window.tryAcquire(deadline.nanosLeft(), TimeUnit.NANOSECONDS);
  }

  /** Gives back a permit from {@link #acquire} that was not used for a message. */
  void release() {
    window.release();
  }

  /**
   * Publishes one message with {@code mandatory = true}, holding a window permit from {@link
   * #acquire}. Its verdict comes later, from the broker's confirm or the channel's closure.
   *
   * @return {@code false} when the channel is closed and the message was not taken
   */
  boolean publish(Entry entry, AMQP.BasicProperties properties, byte[] body) {
    long tag;
    synchronized (this) {
      if (dead) {
        window.release();
        return false;
      }
      tag = channel.getNextPublishSeqNo();
      outstanding.put(tag, entry);
    }
    try {
      channel.basicPublish(entry.exchange, entry.routingKey, true, properties, body);
      return true;
    } catch (IOException | AlreadyClosedException e) {
      if (outstanding.remove(tag) != null) {
        window.release();
      }
      // Settle the channel's other messages before the caller sends anything again, so that
      // events sent again keep their batch order.
      ShutdownSignalException why = channel.getCloseReason();
      if (why == null) {
        close(); // a write failed on an open channel: the connection is going
        why = channel.getCloseReason();
      }
      if (why != null) {
        closed(why);
      }
      return false;
    }
  }

  /** Whether the channel can take messages. */
  synchronized boolean isUsable() {
    return !dead && channel.isOpen();
  }

  /** Whether the channel closed because its whole connection did (or the relay closed it). */
  boolean connectionLost() {
    ShutdownSignalException why = channel.getCloseReason();
    return why != null && (why.isHardError() || why.isInitiatedByApplication());
  }

  /** Why the channel closed, in one line, or {@code null} while it is open. */
  String closeReason() {
    ShutdownSignalException why = channel.getCloseReason();
    return why == null ? null : ChannelClosure.reply(why);
  }

  /** Closes the channel; its unconfirmed messages become sink-unavailable. */
  void close() {
    try {
      channel.abort();
    } catch (IOException | RuntimeException e) {
      // already closed, or the connection is gone: either way nothing more to release
    }
  }

  private void returned(Return r) {
    String id = r.getProperties() == null ? null : r.getProperties().getMessageId();
    for (Entry e : outstanding.values()) {
      if (e.returned == null
          && e.messageId.equals(id)
          && e.exchange.equals(r.getExchange())
          && e.routingKey.equals(r.getRoutingKey())) {
        e.returned =
            "unroutable: exchange '"
                + r.getExchange()
                + "' routing key '"
                + r.getRoutingKey()
                + "' (no queue bound; "
                + r.getReplyCode()
                + " "
                + r.getReplyText()
                + ")";
        return;
      }
    }
  }

  private void acked(long tag, boolean multiple) {
    listener.accepted();
    settle(tag, multiple, null);
  }

  /**
   * A nack is back-pressure (a queue full with {@code x-overflow = reject-publish}, a broker
   * limit), not the event's fault: sink-unavailable, so that the pipeline pauses, counts no attempt
   * and sends the event again later.
   */
  private void nacked(long tag, boolean multiple) {
    listener.refused();
    settle(
        tag,
        multiple,
        "basic.nack: RabbitMQ refused the message (a queue at its x-max-length with x-overflow ="
            + " reject-publish, or a broker limit)");
  }

  private void settle(long tag, boolean multiple, String nack) {
    Iterable<Long> tags = multiple ? outstanding.headMap(tag, true).keySet() : Set.of(tag);
    for (Long t : tags) {
      Entry e = outstanding.remove(t);
      if (e == null) {
        continue;
      }
      Verdict v;
      if (e.returned != null) {
        v = Verdict.permanent(e.returned);
      } else if (nack != null) {
        v = Verdict.unavailable("exchange '" + e.exchange + "': " + nack);
      } else {
        v = Verdict.published();
      }
      // The verdict first, then the permit: a sender waiting for room then sees a failed key.
      e.batch.complete(e.index, v);
      window.release();
    }
  }

  /**
   * The channel closed: every unconfirmed message gets a verdict or goes back to its batch. A
   * missing or forbidden exchange closes the channel; messages for it are permanent failures. A
   * message over the broker's max_message_size closes it too (406); that one message is a permanent
   * failure. The others were dropped by the broker unseen (or are in doubt) and are sent again,
   * charged nothing.
   */
  private synchronized void closed(ShutdownSignalException cause) {
    // Synchronized as a whole: a sender that saw the channel die waits here until every
    // unconfirmed message is settled or queued for resending, so its own resends come after them.
    if (dead) {
      return;
    }
    dead = true;
    ChannelClosure why = ChannelClosure.of(cause);
    if (why.missingExchange()) {
      listener.missingExchange(why.badExchange());
    }
    Entry tooLarge = null;
    if (why.tooLarge()) {
      listener.maxMessageSize(why.maxBody());
      // Not found when the channel died before the message was recorded: then every message is
      // sent again and the sink's own size check, knowing the limit now, stops this one.
      tooLarge = oversized(why.tooLargeBody(), why.maxBody());
    }
    Map.Entry<Long, Entry> next;
    while ((next = outstanding.pollFirstEntry()) != null) {
      Entry e = next.getValue();
      window.release();
      if (why.all() != null) {
        e.batch.complete(e.index, why.all());
      } else if (e.exchange.equals(why.badExchange())) {
        e.batch.complete(e.index, why.bad());
      } else if (e == tooLarge) {
        e.batch.complete(e.index, why.tooLargeVerdict(e.exchange, e.bodySize));
      } else {
        e.batch.resendLater(e.index); // its turn again: the batch's sender sends it on
      }
    }
  }

  /**
   * The unconfirmed message the broker refused as too large: the first one of the size it named,
   * else the first one over its limit; {@code null} when none is.
   */
  private Entry oversized(long bodySize, long max) {
    Entry over = null;
    for (Entry e : outstanding.values()) {
      if (e.bodySize == bodySize) {
        return e;
      }
      if (over == null && e.bodySize > max) {
        over = e;
      }
    }
    return over;
  }
}
