/**
 * The CDC source ({@code source.type = cdc}): its provider, settings and source, how it connects,
 * and what {@code status} reads of a slot's creation; the rest by job:
 *
 * <ul>
 *   <li>{@link io.outbox.source.cdc.lease}: the leader lease, its epoch fence, and what is held or
 *       measured on the leader session;
 *   <li>{@link io.outbox.source.cdc.slot}: the replication slot and the publication;
 *   <li>{@link io.outbox.source.cdc.engine}: one session of Debezium's embedded engine;
 *   <li>{@link io.outbox.source.cdc.stream}: what a session holds in memory, per lane;
 *   <li>{@link io.outbox.source.cdc.table}: rows read from the table ahead of the stream;
 *   <li>{@link io.outbox.source.cdc.claim}: the lanes' claims and their settlement.
 * </ul>
 */
package io.outbox.source.cdc;
