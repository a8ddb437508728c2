package io.outbox.testkit;

import io.outbox.relay.spi.Source;
import java.util.concurrent.CompletableFuture;

/** Activating a source the way a standby does, while the test goes on. */
public final class Activation {

  private Activation() {}

  /**
   * Calls {@link Source#activate()} on another thread: the future completes once the source is
   * active (or its activation was interrupted, the interrupt then kept on that thread), and
   * exceptionally when activation failed.
   */
  public static CompletableFuture<Void> inBackground(Source source) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            source.activate();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
  }
}
