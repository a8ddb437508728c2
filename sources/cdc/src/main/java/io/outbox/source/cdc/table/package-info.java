/**
 * Rows read from the outbox table and handed to the stream ahead of its events: the catch-up at an
 * activation ({@link io.outbox.source.cdc.table.CatchUp}, with its marker in the offsets table) and
 * the reconcile sweep ({@link io.outbox.source.cdc.table.ReconcileSweep}).
 */
package io.outbox.source.cdc.table;
