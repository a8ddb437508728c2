package io.outbox.source.cdc.engine;

import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.SourceException;
import java.util.List;

/**
 * The CDC source's stream sessions, guarded by the source's lifecycle lock: the active one, which
 * the lanes claim from, and the newest, stopped or not, whose engine must be gone before this
 * instance takes the active role again.
 */
public final class StreamSessions {

  private final Object lock;
  private final String pipeline;
  private final String slotName;
  private volatile StreamSession active; // set under lock
  private StreamSession last; // guarded by lock: the newest session, stopped or not

  /**
   * @param lock the source's lifecycle lock
   */
  public StreamSessions(Object lock, String pipeline, String slotName) {
    this.lock = lock;
    this.pipeline = pipeline;
    this.slotName = slotName;
  }

  /** The active session, or {@code null}. */
  public StreamSession active() {
    return active;
  }

  /** {@code s} becomes the active session and the newest one. */
  public void started(StreamSession s) {
    synchronized (lock) {
      active = s;
      last = s;
    }
  }

  /** Takes the active session, if any: there is none then. */
  public StreamSession takeActive() {
    synchronized (lock) {
      StreamSession s = active;
      active = null;
      return s;
    }
  }

  /** {@code s} is no longer the active session, if it was. */
  public void ended(StreamSession s) {
    synchronized (lock) {
      if (active == s) {
        active = null;
      }
    }
  }

  /**
   * The session a lane claims from.
   *
   * @throws LeadershipLostException when the session ended (another lane, or the session's watch,
   *     ended it): every lane stands down
   * @throws IllegalStateException before the first activation
   */
  public StreamSession forClaim() {
    StreamSession s = active;
    if (s == null) {
      synchronized (lock) {
        if (last != null) {
          // Another lane (or the session's watch) ended the session: every lane stands down.
          throw new LeadershipLostException(
              "pipeline " + pipeline + ": the change stream of this instance stopped");
        }
      }
      throw new IllegalStateException("pipeline " + pipeline + ": claim() before activate()");
    }
    return s;
  }

  /**
   * An instance never takes the active role while an engine of its own still runs: that engine's
   * task reconnects by itself and would take the slot back from whichever instance streams it.
   *
   * @throws SourceException when the previous session's engine is not gone ({@link
   *     StreamSession#engineLeft}) after {@link StreamSession#STOP_TIMEOUT}; the pipeline tries
   *     again later
   */
  public void awaitNoEngineLeft() {
    StreamSession previous;
    synchronized (lock) {
      previous = last;
    }
    if (previous == null || previous.engineGone()) {
      return;
    }
    if (!previous.stop(StreamSession.STOP_TIMEOUT)) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": the change stream engine of this instance's previous session is not gone ("
              + String.join("; ", previous.engineLeft())
              + "); not taking the active role while it could take slot "
              + slotName
              + " back");
    }
  }

  /** What is left of the newest engine, stopped or not; empty when gone. */
  public List<String> engineLeft() {
    StreamSession s;
    synchronized (lock) {
      s = last;
    }
    return s == null ? List.of() : s.engineLeft();
  }

  /** How many events the active session holds in memory. */
  public int inMemory() {
    StreamSession s = active;
    return s == null ? 0 : s.stream().size();
  }
}
