package io.outbox.connect;

import io.outbox.relay.spi.OutboxEvent;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Why Kafka would refuse a record whatever the retries, said before it is handed to the worker: a
 * row's defect, a blank or invalid topic name, a record above {@code max-record-bytes}. Produced,
 * such a record would fail the task and stop its lanes until a restart, which fails again.
 */
final class RecordRefusals {

  private final String pipeline;
  private final int maxRecordBytes;

  RecordRefusals(String pipeline, int maxRecordBytes) {
    this.pipeline = pipeline;
    this.maxRecordBytes = maxRecordBytes;
  }

  /**
   * Why {@code event}, routed to {@code topic} ({@code null}: a blank destination), cannot be
   * produced, or {@code null}.
   */
  String of(int lane, OutboxEvent event, String topic) {
    if (event.defect() != null) {
      return event.defect();
    }
    if (topic == null) {
      return "the destination is blank";
    }
    String invalid = invalidTopic(topic);
    return invalid != null
        ? invalid
        : tooLarge(OutboxRecords.toRecord(pipeline, lane, topic, event, ""));
  }

  /** Why Kafka would refuse {@code record} as too large ({@code max-record-bytes}), or null. */
  String tooLarge(SourceRecord record) {
    long size = OutboxRecords.sizeInBytes(record);
    if (size <= maxRecordBytes) {
      return null;
    }
    return "the record is "
        + size
        + " bytes (key, value and headers), above max-record-bytes = "
        + maxRecordBytes
        + ": Kafka would refuse it (the producer's max.request.size, the topic's"
        + " max.message.bytes)";
  }

  /** Why {@code topic} is not a valid topic name, or {@code null}. */
  static String invalidTopic(String topic) {
    try {
      Topic.validate(topic);
      return null;
    } catch (InvalidTopicException e) {
      return "invalid topic name: " + e.getMessage();
    }
  }
}
