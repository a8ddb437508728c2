/**
 * One active instance per pipeline: the leader lease ({@link
 * io.outbox.source.cdc.lease.CdcLeaderLock}) and the epoch fence every write of the source passes,
 * and what the leader session holds or measures (the insert trigger's wake gate, the database's
 * clock).
 */
package io.outbox.source.cdc.lease;
