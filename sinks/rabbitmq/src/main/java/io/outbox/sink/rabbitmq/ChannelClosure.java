package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox.relay.spi.Verdict;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a publishing channel closed, read from its shutdown signal, and which of its unconfirmed
 * messages that blames: all of them ({@link #all}: the connection went, or an error the sink cannot
 * pin on one message), those to one exchange (missing or forbidden), or the one message whose body
 * was over the broker's max_message_size. Messages it does not blame are sent again.
 *
 * @param reply the closure in one line, e.g. {@code 404 NOT_FOUND - no exchange 'x' in vhost '/'}
 * @param all the verdict of every unconfirmed message, or {@code null}
 * @param badExchange the exchange whose messages get {@code bad}, or {@code null}
 * @param bad the verdict of the messages to {@code badExchange}
 * @param missingExchange whether {@code badExchange} does not exist (rather than is forbidden)
 * @param tooLargeBody the body size the broker refused, or {@code -1}
 * @param maxBody the broker's max_message_size it named, or {@code -1}
 */
record ChannelClosure(
    String reply,
    Verdict all,
    String badExchange,
    Verdict bad,
    boolean missingExchange,
    long tooLargeBody,
    long maxBody) {

  private static final Pattern EXCHANGE_IN_REPLY = Pattern.compile("exchange '([^']*)'");
  // RabbitMQ 3.x rabbit_channel:check_msg_size: "message size ~B is larger than [configured] max
  // size ~B"; the size is the body's.
  private static final Pattern SIZE_IN_REPLY =
      Pattern.compile(
          "message size (\\d{1,18}) is larger than (?:configured )?max size (\\d{1,18})");
  private static final int NOT_FOUND = 404;
  private static final int ACCESS_REFUSED = 403;
  private static final int PRECONDITION_FAILED = 406;

  static ChannelClosure of(ShutdownSignalException cause) {
    String reply = reply(cause);
    if (cause.isHardError() || cause.isInitiatedByApplication()) {
      return new ChannelClosure(
          reply,
          Verdict.unavailable(
              cause.isInitiatedByApplication()
                  ? "channel closed by the relay before RabbitMQ confirmed the message"
                  : "connection to RabbitMQ lost before it confirmed the message: " + reply),
          null,
          null,
          false,
          -1,
          -1);
    }
    int code = replyCode(cause);
    Matcher exchange = EXCHANGE_IN_REPLY.matcher(reply);
    if ((code == NOT_FOUND || code == ACCESS_REFUSED) && exchange.find()) {
      String bad = exchange.group(1);
      return new ChannelClosure(
          reply,
          null,
          bad,
          Verdict.permanent(
              code == NOT_FOUND
                  ? "exchange '" + bad + "' does not exist (" + reply + ")"
                  : "not allowed to publish to exchange '" + bad + "' (" + reply + ")"),
          code == NOT_FOUND,
          -1,
          -1);
    }
    Matcher size = SIZE_IN_REPLY.matcher(reply);
    if (code == PRECONDITION_FAILED && size.find()) {
      return new ChannelClosure(
          reply,
          null,
          null,
          null,
          false,
          Long.parseLong(size.group(1)),
          Long.parseLong(size.group(2)));
    }
    return new ChannelClosure(
        reply,
        Verdict.retryable("RabbitMQ closed the channel: " + reply),
        null,
        null,
        false,
        -1,
        -1);
  }

  /** Whether the broker refused a message as larger than its max_message_size. */
  boolean tooLarge() {
    return maxBody >= 0;
  }

  /** The verdict of the message to {@code exchange} of {@code bodySize} bytes found too large. */
  Verdict tooLargeVerdict(String exchange, long bodySize) {
    return Verdict.permanent(
        RabbitMessages.tooLarge(exchange, bodySize, maxBody) + " (" + reply + ")");
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

  /** The closure in one line. */
  static String reply(ShutdownSignalException cause) {
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
