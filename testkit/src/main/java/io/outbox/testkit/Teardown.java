package io.outbox.testkit;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes what one test opened, after the test, the last opened first: the {@code tearDown} with one
 * null check a resource that every integration test wrote out. Register it on a field and open
 * through it:
 *
 * <pre>{@code
 * @RegisterExtension final Teardown teardown = new Teardown();
 * ...
 * fx = teardown.add(new CdcFixture("cdc_purpose"));
 * }</pre>
 *
 * Every resource is closed even when one before it fails to close; the first failure is thrown, the
 * others suppressed in it.
 */
public final class Teardown implements AfterEachCallback {

  private final Deque<AutoCloseable> opened = new ConcurrentLinkedDeque<>();

  /** Closes {@code resource} after the test, before everything added earlier; returns it. */
  public <T extends AutoCloseable> T add(T resource) {
    opened.push(resource);
    return resource;
  }

  /** Closes everything added so far, the last added first, and forgets it. */
  public void closeAll() throws Exception {
    Exception first = null;
    for (AutoCloseable r = opened.poll(); r != null; r = opened.poll()) {
      try {
        r.close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    closeAll();
  }
}
