package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox.relay.spi.Verdict;
import java.io.IOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One channel in confirm mode and its unconfirmed messages, keyed by delivery tag. Confirms,
 * returns and the channel's closure arrive on the connection's thread and turn into verdicts; a
 * window of {@code max-unconfirmed} permits bounds what is in flight. Used by one sender at a time.
 */
final class PublishChannel {

  private static final Pattern EXCHANGE_IN_REPLY = Pattern.compile("exchange '([^']*)'");
  private static final int NOT_FOUND = 404;
  private static final int ACCESS_REFUSED = 403;

  /** One published, unconfirmed message. */
  static final class Entry {
    final BatchPublish batch;
    final int index;
    final String exchange;
    final String routingKey;
    final String messageId;
    volatile String returned; // set by basic.return, which precedes the message's basic.ack

    Entry(BatchPublish batch, int index, String exchange, String routingKey, String messageId) {
      this.batch = batch;
      this.index = index;
      this.exchange = exchange;
      this.routingKey = routingKey;
      this.messageId = messageId;
    }
  }

  private final Channel channel;
  private final Semaphore window;
  private final Consumer<BatchPublish> onResend;
  private final Consumer<String> onMissingExchange;
  private final ConcurrentNavigableMap<Long, Entry> outstanding = new ConcurrentSkipListMap<>();
  private boolean dead; // guarded by this

  private PublishChannel(
      Channel channel,
      int maxUnconfirmed,
      Consumer<BatchPublish> onResend,
      Consumer<String> onMissingExchange) {
    this.channel = channel;
    this.window = new Semaphore(maxUnconfirmed);
    this.onResend = onResend;
    this.onMissingExchange = onMissingExchange;
  }

  /**
   * Opens a channel in confirm mode on {@code connection}.
   *
   * @param onResend told about a batch some of whose events must be sent again on another channel
   * @param onMissingExchange told about an exchange the broker said does not exist
   */
  static PublishChannel open(
      Connection connection,
      int maxUnconfirmed,
      Consumer<BatchPublish> onResend,
      Consumer<String> onMissingExchange)
      throws IOException {
    Channel channel = connection.createChannel();
    if (channel == null) {
      throw new IOException("RabbitMQ refused another channel (channel_max reached)");
    }
    channel.confirmSelect();
    PublishChannel pc = new PublishChannel(channel, maxUnconfirmed, onResend, onMissingExchange);
    channel.addReturnListener(pc::returned);
    channel.addConfirmListener(pc::acked, pc::nacked);
    channel.addShutdownListener(pc::closed);
    return pc;
  }

  /**
   * Waits for room in the window until {@code deadlineNanos}; {@code false} when there was none.
   */
  boolean acquire(long deadlineNanos) throws InterruptedException {
    return window.tryAcquire(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
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
    return why == null ? null : reply(why);
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
    settle(tag, multiple, null);
  }

  private void nacked(long tag, boolean multiple) {
    settle(tag, multiple, "basic.nack: RabbitMQ could not take the message");
  }

  private void settle(long tag, boolean multiple, String nack) {
    Iterable<Long> tags = multiple ? outstanding.headMap(tag, true).keySet() : Set.of(tag);
    for (Long t : tags) {
      Entry e = outstanding.remove(t);
      if (e == null) {
        continue;
      }
      window.release();
      Verdict v;
      if (e.returned != null) {
        v = Verdict.permanent(e.returned);
      } else if (nack != null) {
        v = Verdict.retryable("exchange '" + e.exchange + "': " + nack);
      } else {
        v = Verdict.published();
      }
      e.batch.complete(e.index, v);
    }
  }

  /**
   * The channel closed: every unconfirmed message gets a verdict or goes back to its batch. A
   * missing or forbidden exchange closes the channel; messages for it are permanent failures, the
   * others were dropped by the broker unseen (or are in doubt) and are sent again.
   */
  private synchronized void closed(ShutdownSignalException cause) {
    // Synchronized as a whole: a sender that saw the channel die waits here until every
    // unconfirmed message is settled or queued for resending, so its own resends come after them.
    if (dead) {
      return;
    }
    dead = true;
    String reply = reply(cause);
    String badExchange = null;
    Verdict bad = null; // for the messages to badExchange
    Verdict all = null;
    if (cause.isHardError() || cause.isInitiatedByApplication()) {
      all =
          Verdict.unavailable(
              cause.isInitiatedByApplication()
                  ? "channel closed by the relay before RabbitMQ confirmed the message"
                  : "connection to RabbitMQ lost before it confirmed the message: " + reply);
    } else {
      int code = replyCode(cause);
      Matcher m = EXCHANGE_IN_REPLY.matcher(reply);
      if ((code == NOT_FOUND || code == ACCESS_REFUSED) && m.find()) {
        badExchange = m.group(1);
        if (code == NOT_FOUND) {
          onMissingExchange.accept(badExchange);
        }
        bad =
            Verdict.permanent(
                code == NOT_FOUND
                    ? "exchange '" + badExchange + "' does not exist (" + reply + ")"
                    : "not allowed to publish to exchange '" + badExchange + "' (" + reply + ")");
      } else {
        all = Verdict.retryable("RabbitMQ closed the channel: " + reply);
      }
    }
    Set<BatchPublish> resend = new HashSet<>();
    Map.Entry<Long, Entry> next;
    while ((next = outstanding.pollFirstEntry()) != null) {
      Entry e = next.getValue();
      window.release();
      if (all != null) {
        e.batch.complete(e.index, all);
      } else if (e.exchange.equals(badExchange)) {
        e.batch.complete(e.index, bad);
      } else {
        e.batch.resendLater(e.index);
        resend.add(e.batch);
      }
    }
    resend.forEach(onResend);
  }

  private static int replyCode(ShutdownSignalException cause) {
    Method reason = cause.getReason();
    if (reason instanceof AMQP.Channel.Close close) {
      return close.getReplyCode();
    }
    if (reason instanceof AMQP.Connection.Close close) {
      return close.getReplyCode();
    }
    return -1;
  }

  private static String reply(ShutdownSignalException cause) {
    Method reason = cause.getReason();
    if (reason instanceof AMQP.Channel.Close close) {
      return close.getReplyCode() + " " + close.getReplyText();
    }
    if (reason instanceof AMQP.Connection.Close close) {
      return close.getReplyCode() + " " + close.getReplyText();
    }
    Throwable t = cause.getCause();
    return t != null
        ? t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage())
        : String.valueOf(cause.getMessage());
  }
}
