package io.outbox.testkit;

import java.util.List;

/**
 * A Redis server of a test's own, run from the machine's {@code redis-server} on a free port with
 * its own directory. It writes an append-only file at every command ({@code appendfsync always}),
 * so that what it acknowledged survives a restart, even after a kill.
 */
public final class PrivateRedis extends PrivateServer {

  private PrivateRedis() {
    super(
        "redis-server",
        (port, dir) ->
            List.of(
                "--bind",
                HOST,
                "--port",
                Integer.toString(port),
                "--dir",
                dir.toString(),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--daemonize",
                "no"));
  }

  /**
   * Starts a server and waits until it accepts connections.
   *
   * @throws IllegalStateException when redis-server is missing or does not come up
   */
  public static PrivateRedis start() {
    return new PrivateRedis();
  }

  /** {@code redis://127.0.0.1:<port>}. */
  public String uri() {
    return "redis://" + HOST + ":" + port();
  }
}
