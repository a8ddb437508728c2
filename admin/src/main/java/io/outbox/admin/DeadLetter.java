package io.outbox.admin;

import java.time.Instant;
import java.util.UUID;

/**
 * One row of a dead-letter table as {@link DeadLetterTable#list} shows it: everything an operator
 * needs to decide between replay and purge, without the payload.
 *
 * @param id the row's id (the id it had in the outbox)
 * @param eventId the event's idempotency key, kept on replay
 * @param aggregateType the aggregate type
 * @param aggregateId the aggregate id (the ordering key)
 * @param eventType the event type
 * @param destination the row's destination override, or {@code null}
 * @param reason {@code max-attempts} or {@code permanent}
 * @param attempts failed delivery attempts before it was dead-lettered
 * @param createdAt when the application wrote the event
 * @param deadLetteredAt when the relay moved it here
 * @param lastError the last failure, one line, or {@code null}
 * @param pipeline the pipeline that dead-lettered it
 */
public record DeadLetter(
    long id,
    UUID eventId,
    String aggregateType,
    String aggregateId,
    String eventType,
    String destination,
    String reason,
    int attempts,
    Instant createdAt,
    Instant deadLetteredAt,
    String lastError,
    String pipeline) {}
