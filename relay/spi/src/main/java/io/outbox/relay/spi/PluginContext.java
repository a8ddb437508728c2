package io.outbox.relay.spi;

import com.typesafe.config.Config;
import java.time.Clock;

/**
 * What a plug-in gets from the relay: its own settings subtree and where it sits.
 *
 * @param pipeline the pipeline name
 * @param settings the plug-in's subtree ({@code source.<type>} or {@code sink.<type>}), defaults
 *     from {@code reference.conf} already merged
 * @param path the full key path of {@code settings}, for error messages
 * @param lanes how many lanes the pipeline runs (a source serves claims for lanes {@code
 *     0..lanes-1})
 * @param batchSize the most events one claim or publish should hold
 * @param clock the clock for anything time-based
 * @param roles where a source reports its role (active or standby)
 */
public record PluginContext(
    String pipeline,
    Config settings,
    String path,
    int lanes,
    int batchSize,
    Clock clock,
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
