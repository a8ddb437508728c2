package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmCallback;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ReturnCallback;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

/**
 * A channel without a broker: records what is published and lets a test play the broker's part
 * (acks, nacks, returns, closure), calling the listeners the way the connection's thread would.
 */
final class FakeChannel {

  /** One basic.publish as the channel saw it. */
  record Published(long tag, String exchange, String routingKey, boolean mandatory, String id) {}

  final List<Published> published = new ArrayList<>();
  private long nextTag = 1;
  private ReturnCallback onReturn;
  private ConfirmCallback onAck;
  private ConfirmCallback onNack;
  private final List<ShutdownListener> onShutdown = new ArrayList<>();
  private ShutdownSignalException closeReason;
  final Channel channel;
  final Connection connection;

  FakeChannel() {
    channel =
        (Channel)
            Proxy.newProxyInstance(
                Channel.class.getClassLoader(),
                new Class<?>[] {Channel.class},
                (proxy, method, args) ->
                    switch (method.getName()) {
                      case "getNextPublishSeqNo" -> nextTag;
                      case "confirmSelect" -> null;
                      case "addReturnListener" -> {
                        onReturn = (ReturnCallback) args[0];
                        yield null;
                      }
                      case "addConfirmListener" -> {
                        onAck = (ConfirmCallback) args[0];
                        onNack = (ConfirmCallback) args[1];
                        yield null;
                      }
                      case "addShutdownListener" -> {
                        onShutdown.add((ShutdownListener) args[0]);
                        yield null;
                      }
                      case "basicPublish" -> {
                        if (closeReason != null) {
                          throw new AlreadyClosedException(closeReason);
                        }
                        AMQP.BasicProperties p = (AMQP.BasicProperties) args[3];
                        published.add(
                            new Published(
                                nextTag++,
                                (String) args[0],
                                (String) args[1],
                                (Boolean) args[2],
                                p.getMessageId()));
                        yield null;
                      }
                      case "isOpen" -> closeReason == null;
                      case "getCloseReason" -> closeReason;
                      case "abort" -> {
                        if (closeReason == null) {
                          close(new ShutdownSignalException(false, true, null, proxy));
                        }
                        yield null;
                      }
                      case "hashCode" -> System.identityHashCode(proxy);
                      case "equals" -> proxy == args[0];
                      case "toString" -> "FakeChannel";
                      default -> throw new UnsupportedOperationException(method.getName());
                    });
    connection =
        (Connection)
            Proxy.newProxyInstance(
                Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("createChannel")) {
                    return channel;
                  }
                  throw new UnsupportedOperationException(method.getName());
                });
  }

  void ack(long tag, boolean multiple) throws Exception {
    onAck.handle(tag, multiple);
  }

  void nack(long tag, boolean multiple) throws Exception {
    onNack.handle(tag, multiple);
  }

  /** basic.return of the message published with {@code tag} (no queue bound). */
  void returnMessage(long tag) {
    Published p = published.stream().filter(x -> x.tag() == tag).findFirst().orElseThrow();
    onReturn.handle(
        new Return(
            312,
            "NO_ROUTE",
            p.exchange(),
            p.routingKey(),
            new AMQP.BasicProperties.Builder().messageId(p.id()).build(),
            new byte[0]));
  }

  /** The broker closes the channel with {@code code} and {@code text}. */
  void closeByBroker(int code, String text) {
    close(
        new ShutdownSignalException(
            false,
            false,
            new AMQP.Channel.Close.Builder().replyCode(code).replyText(text).build(),
            channel));
  }

  /** The connection under the channel is lost. */
  void loseConnection() {
    close(
        new ShutdownSignalException(
            true,
            false,
            new AMQP.Connection.Close.Builder()
                .replyCode(320)
                .replyText("CONNECTION_FORCED - broker forced connection closure")
                .build(),
            connection));
  }

  private void close(ShutdownSignalException cause) {
    closeReason = cause;
    onShutdown.forEach(l -> l.shutdownCompleted(cause));
  }
}
