package io.outbox.relay.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.outbox.admin.OutboxStatus;
import io.outbox.admin.SlotCreationWait;
import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * One pipeline's line of {@code status}: its figures as the database shows them, or why they could
 * not be read.
 *
 * @param pipeline the pipeline name
 * @param table the outbox table, as the user writes it
 * @param instances the relay instances serving it, or {@code null} when unreadable
 * @param backlog the backlog figures, or {@code null} when unreadable
 * @param slotCreation the creation of the pipeline's CDC replication slot under way, with the
 *     transactions it waits for; {@code null} when none runs
 * @param error why the figures could not be read, or {@code null}
 * @param delivery {@code at-least-once} or {@code exactly-once} ({@code sink.kafka.delivery})
 * @param ledgerSettled exactly-once: per ledger partition, the last ledger offset the database
 *     settled; {@code null} otherwise or when unreadable
 */
record PipelineStatus(
    String pipeline,
    String table,
    OutboxStatus.Instances instances,
    OutboxStatus.Backlog backlog,
    SlotCreationWait slotCreation,
    String error,
    String delivery,
    java.util.Map<Integer, Long> ledgerSettled) {

  private static final int MAX_ERROR = 100;

  static PipelineStatus read(
      String pipeline, String table, OutboxStatus.Instances instances, OutboxStatus.Backlog b) {
    return read(pipeline, table, instances, b, null);
  }

  static PipelineStatus read(
      String pipeline,
      String table,
      OutboxStatus.Instances instances,
      OutboxStatus.Backlog b,
      SlotCreationWait slotCreation) {
    return new PipelineStatus(
        pipeline, table, instances, b, slotCreation, null, "at-least-once", null);
  }

  static PipelineStatus failed(String pipeline, String table, String error) {
    return new PipelineStatus(pipeline, table, null, null, null, error, "at-least-once", null);
  }

  /** This status with its delivery mode and, exactly-once, the settled ledger offsets. */
  PipelineStatus withDelivery(String mode, java.util.Map<Integer, Long> settled) {
    return new PipelineStatus(
        pipeline, table, instances, backlog, slotCreation, error, mode, settled);
  }

  /** {@code 1234 (partition 0), 1200 (partition 1)}, or {@code none yet}. */
  String ledgerText() {
    if (ledgerSettled.isEmpty()) {
      return "none yet";
    }
    StringBuilder sb = new StringBuilder();
    new java.util.TreeMap<>(ledgerSettled)
        .forEach(
            (p, o) ->
                sb.append(sb.length() == 0 ? "" : ", ")
                    .append(o)
                    .append(" (partition ")
                    .append(p)
                    .append(')'));
    return sb.toString();
  }

  /**
   * {@code active}, {@code active (+1 standby)}, {@code standby (2)} or {@code not running}; while
   * an instance is active, its lease's epoch, and how long ago the lease expired if it did (the
   * active instance is frozen or cut off: a standby takes over).
   */
  String roleText() {
    if (instances.active()) {
      int standbys = instances.standbys();
      String role = standbys == 0 ? "active" : "active (+" + standbys + " standby)";
      OutboxStatus.Lease lease = instances.lease();
      if (lease == null) {
        return role;
      }
      return role
          + " epoch "
          + lease.epoch()
          + (lease.expiresIn().isNegative()
              ? ", lease expired " + age(lease.expiresIn().negated()) + " ago"
              : "");
    }
    return instances.connected() > 0 ? "standby (" + instances.connected() + ")" : "not running";
  }

  /**
   * The table of every pipeline, with a line per pipeline whose figures could not be read; below
   * it, a line per pipeline whose replication slot is being created, with what that waits for.
   */
  static String text(List<PipelineStatus> all) {
    TextTable table =
        new TextTable(
            "PIPELINE", "ROLE", "PENDING", "OLDEST", "RETRYING", "DEAD LETTERS", "LAST ERROR");
    for (PipelineStatus s : all) {
      if (s.error != null) {
        table.row(s.pipeline, "?", "?", "?", "?", "?", TextTable.cut(s.error, MAX_ERROR));
        continue;
      }
      OutboxStatus.Backlog b = s.backlog;
      table.row(
          s.pipeline,
          s.roleText(),
          Long.toString(b.pending()),
          age(b.oldestPendingAge()),
          retrying(b),
          Long.toString(b.deadLetters()),
          b.lastError() == null ? "-" : TextTable.cut(b.lastError(), MAX_ERROR));
    }
    StringBuilder text = new StringBuilder(table.toString());
    for (PipelineStatus s : all) {
      if (s.ledgerSettled != null) {
        text.append(s.pipeline)
            .append(": exactly-once, ledger settled up to offset ")
            .append(s.ledgerText())
            .append('\n');
      }
      if (s.slotCreation != null) {
        text.append(s.pipeline)
            .append(": creating the replication slot for ")
            .append(age(s.slotCreation.waiting()))
            .append(", waiting for ")
            .append(s.slotCreation.blockers().size())
            .append(" transaction(s) open since before: ")
            .append(s.slotCreation.describeBlockers())
            .append('\n');
      }
    }
    return text.toString();
  }

  /**
   * {@code 3}, or {@code 3 (1 dead-letter move failed)} when the dead-letter table refused some.
   */
  static String retrying(OutboxStatus.Backlog b) {
    return b.deadLetterMoveFailed() == 0
        ? Long.toString(b.retrying())
        : b.retrying() + " (" + b.deadLetterMoveFailed() + " dead-letter move failed)";
  }

  /** A short age: {@code 45s}, {@code 3m05s}, {@code 2h07m}, {@code 3d04h}; {@code -} for none. */
  static String age(Duration d) {
    long s = d.toSeconds();
    if (d.isZero()) {
      return "-";
    }
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return String.format("%dm%02ds", s / 60, s % 60);
    }
    if (s < 86_400) {
      return String.format("%dh%02dm", s / 3600, s % 3600 / 60);
    }
    return String.format("%dd%02dh", s / 86_400, s % 86_400 / 3600);
  }

  /**
   * {@code {"pipelines": [...]}}: per pipeline {@code pipeline, table, role, standbys, lease
   * (epoch, holder, expires_in_seconds; when one was taken), pending, oldest_pending_age_seconds,
   * retrying, dead_letters, dead_letter_move_failed, last_error, slot_creation (waiting_seconds,
   * blocking: [{pid, name, open_seconds}]; while the CDC slot is being created)}, or {@code
   * pipeline, table, error}.
   */
  static String json(List<PipelineStatus> all) {
    return JsonDocument.of(
        g -> {
          g.writeArrayFieldStart("pipelines");
          for (PipelineStatus s : all) {
            g.writeStartObject();
            g.writeStringField("pipeline", s.pipeline);
            g.writeStringField("table", s.table);
            g.writeStringField("delivery", s.delivery);
            if (s.ledgerSettled != null) {
              g.writeObjectFieldStart("ledger_settled_offsets");
              for (var e : new java.util.TreeMap<>(s.ledgerSettled).entrySet()) {
                g.writeNumberField(Integer.toString(e.getKey()), e.getValue());
              }
              g.writeEndObject();
            }
            if (s.error != null) {
              g.writeStringField("error", s.error);
            } else {
              OutboxStatus.Backlog b = s.backlog;
              g.writeStringField("role", s.instances.role());
              g.writeNumberField("standbys", s.instances.standbys());
              OutboxStatus.Lease lease = s.instances.lease();
              if (lease != null) {
                g.writeObjectFieldStart("lease");
                g.writeNumberField("epoch", lease.epoch());
                g.writeStringField("holder", lease.holder());
                g.writeNumberField("expires_in_seconds", lease.expiresIn().toMillis() / 1000.0);
                g.writeEndObject();
              }
              g.writeNumberField("pending", b.pending());
              g.writeNumberField(
                  "oldest_pending_age_seconds", b.oldestPendingAge().toMillis() / 1000.0);
              g.writeNumberField("retrying", b.retrying());
              g.writeNumberField("dead_letters", b.deadLetters());
              g.writeNumberField("dead_letter_move_failed", b.deadLetterMoveFailed());
              g.writeStringField("last_error", b.lastError());
              if (s.slotCreation != null) {
                slotCreation(g, s.slotCreation);
              }
            }
            g.writeEndObject();
          }
          g.writeEndArray();
        });
  }

  private static void slotCreation(JsonGenerator g, SlotCreationWait wait) throws IOException {
    g.writeObjectFieldStart("slot_creation");
    g.writeNumberField("waiting_seconds", wait.waiting().toMillis() / 1000.0);
    g.writeArrayFieldStart("blocking");
    for (SlotCreationWait.Blocker b : wait.blockers()) {
      g.writeStartObject();
      if (b.pid() == null) {
        g.writeNullField("pid");
      } else {
        g.writeNumberField("pid", b.pid());
      }
      g.writeStringField("name", b.name());
      if (b.age() == null) {
        g.writeNullField("open_seconds");
      } else {
        g.writeNumberField("open_seconds", b.age().toMillis() / 1000.0);
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }
}
