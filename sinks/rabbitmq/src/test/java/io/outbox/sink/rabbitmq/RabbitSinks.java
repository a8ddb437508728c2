package io.outbox.sink.rabbitmq;

import static io.outbox.sink.rabbitmq.Contexts.context;

import io.outbox.relay.spi.Sink;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The RabbitMQ sinks one test creates on one broker, and an admin connection to that broker (made
 * when first asked for); after each test, the sinks are closed (5 s each) and then the admin.
 *
 * <pre>{@code
 * @RegisterExtension final RabbitSinks rabbitmq = new RabbitSinks();
 * ...
 * Sink sink = rabbitmq.sink("declare { ... }");
 * String queue = rabbitmq.admin().queue(...);
 * }</pre>
 */
final class RabbitSinks implements AfterEachCallback {
  private final Supplier<String> uri;
  private final Callable<RabbitAdmin> connect;
  private final List<Sink> sinks = new ArrayList<>();
  private RabbitAdmin admin;

  /** Sinks on the shared broker of {@code scripts/services.sh}. */
  RabbitSinks() {
    this(Services::rabbitUri, RabbitAdmin::new);
  }

  /**
   * Sinks on the broker at {@code uri} (asked when a sink is created); {@code connect} opens the
   * admin connection.
   */
  RabbitSinks(Supplier<String> uri, Callable<RabbitAdmin> connect) {
    this.uri = uri;
    this.connect = connect;
  }

  /** The admin connection to the broker, opened on the first call of the test. */
  RabbitAdmin admin() throws Exception {
    if (admin == null) {
      admin = connect.call();
    }
    return admin;
  }

  /** A started sink with {@code uri} of the broker and the settings {@code hocon}. */
  Sink sink(String hocon) {
    return sinkWith("uri = \"" + uri.get() + "\"\n" + hocon);
  }

  /** A started sink with exactly the settings {@code hocon} (which name the broker). */
  Sink sinkWith(String hocon) {
    Sink sink = RabbitSinkIT.provider().create(context(hocon));
    sinks.add(sink);
    return sink;
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    try {
      sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
    } finally {
      sinks.clear();
      if (admin != null) {
        RabbitAdmin a = admin;
        admin = null;
        a.close();
      }
    }
  }
}
