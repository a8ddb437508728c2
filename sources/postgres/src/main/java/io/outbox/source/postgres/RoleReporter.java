package io.outbox.source.postgres;

import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.PluginContext.RoleListener;

/**
 * Tells the pipeline a source's role, once per change. Its state is guarded by the source's own
 * lifecycle lock, so that a report made while the source holds that lock is ordered with the
 * source's other lifecycle changes; the listener is called outside the lock unless the caller holds
 * it.
 */
public final class RoleReporter {

  private final RoleListener listener;
  private final Object lock;
  private Role reported; // guarded by lock

  /**
   * @param listener the pipeline's listener ({@code PluginContext.roles()}), or {@code null}
   * @param lock the source's lifecycle lock
   */
  public RoleReporter(RoleListener listener, Object lock) {
    this.listener = listener;
    this.lock = lock;
  }

  /** Reports {@code role} unless it is the role reported last. */
  public void report(Role role) {
    synchronized (lock) {
      if (role == reported) {
        return;
      }
      reported = role;
    }
    if (listener != null) {
      listener.roleChanged(role);
    }
  }

  /** On close: reports {@code STANDBY} if the role reported last is {@code ACTIVE}. */
  public void standbyIfActive() {
    synchronized (lock) {
      if (reported == Role.ACTIVE) {
        report(Role.STANDBY);
      }
    }
  }
}
