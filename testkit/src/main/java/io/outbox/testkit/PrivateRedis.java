package io.outbox.testkit;

import java.util.List;

/**
 * A Redis server of a test's own, run from the machine's {@code redis-server} on a free port with
 * its own directory. It writes an append-only file at every command ({@code appendfsync always}),
 * so that what it acknowledged survives a restart, even after a kill.
 */
public final class PrivateRedis extends PrivateServer {

  private PrivateRedis(List<String> extra) {
    super(
        "redis-server",
        (port, dir) ->
            with(
                extra,
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

  private static List<String> with(List<String> extra, String... args) {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.addAll(extra); // later options win in redis-server's command line
    return all;
  }

  /**
   * Starts a server and waits until it accepts connections.
   *
   * @throws IllegalStateException when redis-server is missing or does not come up
   */
  public static PrivateRedis start() {
    return new PrivateRedis(List.of());
  }

  /**
   * Starts a server with {@code options} after the usual ones (e.g. {@code --appendonly no}, or
   * {@code --replicaof 127.0.0.1 <port>} for a replica), and waits until it accepts connections.
   */
  public static PrivateRedis start(String... options) {
    return new PrivateRedis(List.of(options));
  }

  /** {@code redis://127.0.0.1:<port>}. */
  public String uri() {
    return "redis://" + HOST + ":" + port();
  }
}
