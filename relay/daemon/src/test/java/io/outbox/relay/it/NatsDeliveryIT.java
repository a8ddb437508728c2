package io.outbox.relay.it;

import io.outbox.testkit.Delivered;
import io.outbox.testkit.NatsTestSupport;
import io.outbox.testkit.PrivateNats;
import io.outbox.testkit.PrivateServer;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/** The delivery scenarios with the NATS JetStream sink: one stream per test binds its subjects. */
@Tag("quick")
class NatsDeliveryIT extends SinkDeliveryScenarios {

  private final Map<String, NatsTestSupport> servers = new HashMap<>();

  @Override
  protected String sharedServer() {
    return Services.natsUrl();
  }

  @Override
  protected PrivateServer startPrivateServer() {
    return PrivateNats.start();
  }

  @Override
  protected String url(PrivateServer server) {
    return ((PrivateNats) server).url();
  }

  @Override
  protected String sink(String url) {
    return "type = nats, nats { url = \"%s\", publish-timeout = 3s, connection-timeout = 1s }"
        .formatted(url);
  }

  @Override
  protected void prepare(String url, String prefix) throws Exception {
    NatsTestSupport nats = NatsTestSupport.connect(url);
    servers.put(url, nats);
    nats.createStream(stream(prefix), prefix + ".>");
  }

  @Override
  protected List<Delivered> read(String url, String prefix, int expected) throws Exception {
    return servers.get(url).read(stream(prefix), expected, Duration.ofSeconds(30));
  }

  /** A subject no stream binds. */
  @Override
  protected String poisonDestination(String url, String prefix) {
    return "unbound." + prefix;
  }

  @Override
  protected void cleanUp() {
    servers.values().forEach(NatsTestSupport::close);
  }

  private static String stream(String prefix) {
    return prefix.replaceAll("[^A-Za-z0-9_-]", "_");
  }
}
