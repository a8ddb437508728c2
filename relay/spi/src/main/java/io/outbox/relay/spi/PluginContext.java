package io.outbox.relay.spi;

import com.typesafe.config.Config;
import java.time.Clock;

/**
 * What a plug-in gets from the relay: its own settings subtree, where it sits, and the relay's time
 * (a plug-in reads no clock of its own).
 *
 * @param pipeline the pipeline name
 * @param settings the plug-in's subtree ({@code source.<type>} or {@code sink.<type>}), defaults
 *     from {@code reference.conf} already merged
 * @param path the full key path of {@code settings}, for error messages
 * @param lanes how many lanes the pipeline runs (a source serves claims for lanes {@code
 *     0..lanes-1})
 * @param batchSize the most events one claim or publish should hold
 * @param clock wall time: what a plug-in compares with timestamps (due times, an event's age)
 * @param ticker monotonic time: what a plug-in measures timeouts, deadlines and intervals on; the
 *     relay's one ticker, so that a test drives a plug-in's timing rules instead of sleeping
 * @param roles where a source reports its role (active or standby)
 */
public record PluginContext(
    String pipeline,
    Config settings,
    String path,
    int lanes,
    int batchSize,
    Clock clock,
    Ticker ticker,
    RoleListener roles) {

  /** Receives a source's changes of role. */
  @FunctionalInterface
  public interface RoleListener {
    void roleChanged(Role role);
  }

  /** Whether this instance publishes for the pipeline. */
  public enum Role {
    STANDBY,
    ACTIVE
  }

  /** The full key path of a setting below this plug-in's subtree. */
  public String pathOf(String key) {
    return path + "." + key;
  }
}
