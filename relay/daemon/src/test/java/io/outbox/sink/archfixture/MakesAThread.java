package io.outbox.sink.archfixture;

/** ThreadOwnersTest's offender: a sink's class that starts a thread of its own. */
public final class MakesAThread {
  public Thread start(Runnable body) {
    return new Thread(body, "outbox-relay-orders-own");
  }
}
