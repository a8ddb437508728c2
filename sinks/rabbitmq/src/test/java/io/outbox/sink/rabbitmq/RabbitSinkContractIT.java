package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.Sink;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.SinkContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.BeforeEach;

/**
 * The RabbitMQ sink passes the sink contract against the broker of {@code scripts/services.sh}: a
 * destination is a topic exchange with a queue bound to it by {@code #}.
 */
class RabbitSinkContractIT extends SinkContract {

  private static final int FULL_AT = 50;

  private RabbitAdmin admin;
  private final Map<String, String> queueOf = new HashMap<>();

  @BeforeEach
  void connect() throws Exception {
    admin = closeAfter(new RabbitAdmin());
  }

  @Override
  protected String newDestination() throws Exception {
    String exchange = admin.exchange(RabbitAdmin.unique("outbox.contract.it"));
    queueOf.put(exchange, admin.queue(RabbitAdmin.unique("q.contract.it"), exchange, "#"));
    return exchange;
  }

  @Override
  protected Sink newSink(String extraSettings) {
    return create("uri = \"" + Services.rabbitUri() + "\"\n" + extraSettings);
  }

  @Override
  protected Sink newUnreachableSink() throws Exception {
    return create(
        "uri = \"amqp://guest:guest@127.0.0.1:"
            + LocalPorts.unbound()
            + "/%2f\"\nconfirm-timeout = 3s\nconnection-timeout = 2s");
  }

  /** A queue capped at 50 messages with reject-publish, purged every 5 ms. */
  @Override
  protected Refusing refusingDestination() throws Exception {
    String exchange = admin.exchange(RabbitAdmin.unique("outbox.contract.full"));
    String queue =
        admin.queue(
            RabbitAdmin.unique("q.contract.full"),
            exchange,
            "#",
            Map.of("x-max-length", FULL_AT, "x-overflow", "reject-publish"));
    Channel channel = closeAfter(admin.channel());
    ScheduledExecutorService drainer = Executors.newSingleThreadScheduledExecutor();
    closeAfter(drainer::shutdownNow);
    drainer.scheduleWithFixedDelay(
        () -> {
          try {
            channel.queuePurge(queue);
          } catch (Exception e) {
            // the channel closes at the end of the test
          }
        },
        5,
        5,
        TimeUnit.MILLISECONDS);
    return new Refusing(exchange, "", FULL_AT);
  }

  /** AMQP short strings hold at most 255 bytes. */
  @Override
  protected String invalidDestination() {
    return "x".repeat(256);
  }

  @Override
  protected List<Delivered> read(String exchange, int expected, Duration timeout) throws Exception {
    String queue = queueOf.get(exchange);
    List<GetResponse> received = new ArrayList<>();
    try {
      Awaitility.await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                received.addAll(admin.drain(queue));
                return received.size() >= expected;
              });
    } catch (ConditionTimeoutException e) {
      // Fewer than expected arrived: return them, the contract's assertions say what is missing.
    }
    return received.stream().map(RabbitSinkContractIT::delivered).toList();
  }

  private static Delivered delivered(GetResponse r) {
    AMQP.BasicProperties p = r.getProps();
    Map<String, String> headers = new LinkedHashMap<>();
    if (p.getHeaders() != null) {
      p.getHeaders().forEach((k, v) -> headers.put(k, v == null ? null : v.toString()));
    }
    return new Delivered(
        p.getMessageId(), null, p.getType(), headers, r.getBody(), p.getContentType());
  }

  private static Sink create(String hocon) {
    return SinkContexts.sink(RabbitSinkProvider.TYPE, hocon);
  }

  /**
   * {@inheritDoc} Here the AMQP binding (1.0.2) names application properties
   * cloudEvents_<attribute>.
   */
  @Override
  protected String cloudEventsBindingPrefix() {
    return "cloudEvents_";
  }
}
