/**
 * Debezium's embedded engine, one run per activation ({@link
 * io.outbox.source.cdc.engine.StreamSession}): its properties, the connector wrapped so the session
 * owns every call into it, the change records handed to the stream, the offsets stored in the
 * relay's table, the session's threads, and the wait until nothing of a stopped engine is left.
 */
package io.outbox.source.cdc.engine;
