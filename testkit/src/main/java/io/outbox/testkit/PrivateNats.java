package io.outbox.testkit;

import java.util.List;

/**
 * A NATS server with JetStream of a test's own, run from the machine's {@code nats-server} on a
 * free port with its own store directory; streams and messages survive a restart (file storage).
 */
public final class PrivateNats extends PrivateServer {

  private PrivateNats() {
    super(
        "nats-server",
        (port, dir) ->
            List.of(
                "-a",
                HOST,
                "-p",
                Integer.toString(port),
                "-js",
                "-sd",
                dir.resolve("jetstream").toString()));
  }

  /**
   * Starts a server and waits until it accepts connections.
   *
   * @throws IllegalStateException when nats-server is missing or does not come up
   */
  public static PrivateNats start() {
    return new PrivateNats();
  }

  /** {@code nats://127.0.0.1:<port>}. */
  public String url() {
    return "nats://" + HOST + ":" + port();
  }
}
