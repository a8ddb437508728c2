/**
 * What one activation holds in memory ({@link io.outbox.source.cdc.stream.ChangeStream}): the
 * events per lane, per-key hold-back and parking (and the read-back of parked rows), the watermark
 * of stream positions, and how an outbox row is read as an event. The CDC source's owner of per-key
 * order (OrderOwnersTest).
 */
package io.outbox.source.cdc.stream;
