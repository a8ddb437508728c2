/**
 * The plug-in support kit: helpers a sink (or source) may use, not types it must implement. The SPI
 * proper stays in {@link io.outbox.relay.spi}; this package holds the shared machinery that keeps a
 * sink small and its promises decided in one place.
 *
 * <ul>
 *   <li>{@link io.outbox.relay.spi.support.BatchPublisher}: sender threads, the batch timeout,
 *       completion off the client's thread, bounded probes, drain on close, health logging.
 *   <li>{@link io.outbox.relay.spi.support.PendingBatch}: the one verdict collector of a batch
 *       (first verdict wins, a failed key's later events held behind, resends in order).
 *   <li>{@link io.outbox.relay.spi.support.InFlightWindow}: the bound on unanswered messages.
 * </ul>
 *
 * <p>See {@code docs/plugins.md}.
 */
package io.outbox.relay.spi.support;
