/**
 * The replication slot and the publication, on the activation's own sessions: the checks before
 * streaming, the slot's creation and the catch-up it calls for ({@link
 * io.outbox.source.cdc.slot.SlotSetup}), and what the source reports of the slot ({@link
 * io.outbox.source.cdc.slot.SlotStatus}).
 */
package io.outbox.source.cdc.slot;
