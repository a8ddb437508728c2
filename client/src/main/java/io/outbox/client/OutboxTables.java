package io.outbox.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The outbox table and its dead-letter table, as named in the configuration ({@code table}, {@code
 * dead-letter-table}), validated once and quoted exactly for SQL.
 *
 * <p>A name is {@code table} or {@code schema.table}; each part is made of ASCII letters, digits
 * and {@code _}, does not start with a digit, and is at most 63 bytes. Unqualified names live in
 * {@value #DEFAULT_SCHEMA}. Case is kept as written: {@code Billing.OrderEvents} is the table
 * {@code "Billing"."OrderEvents"}, not {@code billing.orderevents}. Every name derived from the
 * tables (indexes, constraints, the notify function and channel, the migration history table) stays
 * within PostgreSQL's 63-byte identifier limit: a name that would be longer is truncated and ends
 * with a short hash of the full name, so it stays unique.
 *
 * @param schema the outbox table's schema, as written (default {@value #DEFAULT_SCHEMA})
 * @param table the outbox table's bare name, as written
 * @param deadLetterSchema the dead-letter table's schema, as written
 * @param deadLetterTable the dead-letter table's bare name, as written
 * @param columns the outbox table's names for the relay's event columns ({@code columns.*})
 */
public record OutboxTables(
    String schema,
    String table,
    String deadLetterSchema,
    String deadLetterTable,
    OutboxColumns columns) {

  /** The schema of a name written without one. */
  public static final String DEFAULT_SCHEMA = "public";

  /** PostgreSQL's identifier limit (NAMEDATALEN - 1), in bytes. */
  public static final int MAX_IDENTIFIER_BYTES = 63;

  /** Suffix of the default dead-letter table name, see {@link #of(String)}. */
  public static final String DEAD_LETTER_SUFFIX = "_dead_letter";

  /** The outbox table's columns the relay reads and writes, in the migration's order. */
  public static final List<String> OUTBOX_COLUMNS =
      List.of(
          "id",
          "event_id",
          "aggregate_type",
          "aggregate_id",
          "event_type",
          "destination",
          "payload",
          "headers",
          "created_at",
          "available_at",
          "published_at",
          "attempts",
          "next_attempt_at",
          "last_error");

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern CHANNEL_SAFE = Pattern.compile("[a-z0-9_]+");
  private static final int HASH_CHARS = 8;

  /** Tables in the relay's own column layout ({@link OutboxColumns#DEFAULT}). */
  public OutboxTables(
      String schema, String table, String deadLetterSchema, String deadLetterTable) {
    this(schema, table, deadLetterSchema, deadLetterTable, OutboxColumns.DEFAULT);
  }

  /** Validates every part; see the class comment for the rules. */
  public OutboxTables {
    Objects.requireNonNull(columns, "columns");
    checkPart(schema, "schema of the outbox table");
    checkPart(table, "outbox table name");
    checkPart(deadLetterSchema, "schema of the dead-letter table");
    checkPart(deadLetterTable, "dead-letter table name");
    if (schema.equals(deadLetterSchema) && table.equals(deadLetterTable)) {
      throw new IllegalArgumentException(
          "the dead-letter table must differ from the outbox table, both are '"
              + schema
              + "."
              + table
              + "'");
    }
  }

  /**
   * The tables as written in the configuration.
   *
   * @param table the outbox table, {@code name} or {@code schema.name}
   * @param deadLetterTable the dead-letter table, {@code name} or {@code schema.name}
   * @throws IllegalArgumentException naming the bad value
   */
  public static OutboxTables of(String table, String deadLetterTable) {
    String[] outbox = split(table, "table");
    String[] dead = split(deadLetterTable, "dead-letter-table");
    return new OutboxTables(outbox[0], outbox[1], dead[0], dead[1]);
  }

  /**
   * The outbox table as written, with its dead letters in {@code <table>_dead_letter} in the same
   * schema (so {@code outbox} gives {@code public.outbox_dead_letter}).
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static OutboxTables of(String table) {
    String[] outbox = split(table, "table");
    return new OutboxTables(outbox[0], outbox[1], outbox[0], fit(outbox[1], DEAD_LETTER_SUFFIX));
  }

  /** These tables, with the outbox's event columns named {@code columns}. */
  public OutboxTables withColumns(OutboxColumns columns) {
    return new OutboxTables(schema, table, deadLetterSchema, deadLetterTable, columns);
  }

  /** The outbox table for SQL, quoted: {@code "public"."outbox"}. */
  public String qualifiedTable() {
    return quote(schema) + "." + quote(table);
  }

  /** The dead-letter table for SQL, quoted: {@code "public"."outbox_dead_letter"}. */
  public String qualifiedDeadLetterTable() {
    return quote(deadLetterSchema) + "." + quote(deadLetterTable);
  }

  /** The outbox table as a user writes it, for messages: {@code public.outbox}. */
  public String displayTable() {
    return schema + "." + table;
  }

  /** The dead-letter table as a user writes it, for messages. */
  public String displayDeadLetterTable() {
    return deadLetterSchema + "." + deadLetterTable;
  }

  /**
   * The LISTEN/NOTIFY channel the outbox's insert trigger notifies: {@code
   * outbox_relay_<schema>_<table>}, at most 63 bytes and always lower-case letters, digits and
   * {@code _}, so {@code LISTEN <channel>} works unquoted. Names with upper-case letters, or too
   * long, get a hash of the exact names so that distinct tables keep distinct channels.
   */
  public String notifyChannel() {
    String base = "outbox_relay_" + schema + "_" + table;
    if (base.length() <= MAX_IDENTIFIER_BYTES && CHANNEL_SAFE.matcher(base).matches()) {
      return base;
    }
    String lower = base.toLowerCase(Locale.ROOT);
    String hash = hash(schema + "." + table);
    int keep = Math.min(lower.length(), MAX_IDENTIFIER_BYTES - HASH_CHARS - 1);
    return lower.substring(0, keep) + "_" + hash;
  }

  /**
   * The bare name of this outbox's Flyway history table, {@code <table>_relay_schema_history}, in
   * {@link #schema()}: separate from the application's own {@code flyway_schema_history} and from
   * every other outbox's history. At most 57 bytes, so Flyway's own index names on it fit too.
   */
  public String historyTable() {
    // Flyway names the history table's index "<history>_s_idx": keep room for it.
    return fit(table, "_relay_schema_history", MAX_IDENTIFIER_BYTES - "_s_idx".length());
  }

  /**
   * The bare name of the CDC source's offsets table, {@code <table>_relay_offsets}, in {@link
   * #schema()}: where the change-data-capture source keeps its stream positions, one row per
   * pipeline and engine key, so the daemon keeps no state on local disk.
   */
  public String offsetsTable() {
    return fit(table, "_relay_offsets");
  }

  /** The offsets table for SQL, quoted: {@code "public"."outbox_relay_offsets"}. */
  public String qualifiedOffsetsTable() {
    return quote(schema) + "." + quote(offsetsTable());
  }

  /** The offsets table as a user writes it, for messages. */
  public String displayOffsetsTable() {
    return schema + "." + offsetsTable();
  }

  /**
   * The bare name of the leader lease table, {@code <table>_relay_leader}, in {@link #schema()}:
   * one row per pipeline with the active instance's epoch and lease expiry ({@link LeaderLease}).
   */
  public String leaderTable() {
    return fit(table, "_relay_leader");
  }

  /** The leader lease table for SQL, quoted: {@code "public"."outbox_relay_leader"}. */
  public String qualifiedLeaderTable() {
    return quote(schema) + "." + quote(leaderTable());
  }

  /**
   * The bare name of the position table, {@code <table>_relay_position}, in {@link #schema()}: per
   * pipeline and lane, how far settlement by position has come (the snapshot before which every row
   * is settled, the window being read and the last id read in it).
   */
  public String positionTable() {
    return fit(table, "_relay_position");
  }

  /** The position table for SQL, quoted: {@code "public"."outbox_relay_position"}. */
  public String qualifiedPositionTable() {
    return quote(schema) + "." + quote(positionTable());
  }

  /**
   * The bare name of the ledger watermark table, {@code <table>_relay_ledger}, in {@link
   * #schema()}: per pipeline and ledger partition, the last settled ledger offset of an
   * exactly-once pipeline ({@link LedgerWatermarks}).
   */
  public String ledgerTable() {
    return fit(table, "_relay_ledger");
  }

  /** The ledger watermark table for SQL, quoted: {@code "public"."outbox_relay_ledger"}. */
  public String qualifiedLedgerTable() {
    return quote(schema) + "." + quote(ledgerTable());
  }

  /**
   * The transaction advisory lock {@code (key1, key2)} that fences claims: every claim transaction
   * holds it shared; an instance taking over holds it exclusively while it raises the epoch, so it
   * waits for (or ends) the claims of the instance before it. A two-int key, which never collides
   * with the bigint leader lock.
   */
  public int[] fenceLockKey(String pipeline) {
    byte[] digest = sha256("outbox-relay:fence:" + pipeline + ":" + displayTable());
    int hi = 0;
    int lo = 0;
    for (int i = 0; i < 4; i++) {
      hi = (hi << 8) | (digest[i] & 0xff);
      lo = (lo << 8) | (digest[i + 4] & 0xff);
    }
    return new int[] {hi, lo};
  }

  /**
   * The first half of the two-int advisory locks through which the insert trigger skips its {@code
   * NOTIFY} while the relay is busy (docs/design.md, "Wake-ups"): {@code (key, 1)}, held
   * exclusively by the active instance's wake gate while a lane claims back-to-back, and {@code
   * (key, 2)}, held shared until commit by every transaction that skipped its notification. A
   * stable 32-bit hash of the outbox alone: the trigger knows no pipeline.
   */
  public int wakeLockKey() {
    byte[] digest = sha256("outbox-relay:wake:" + displayTable());
    return ((digest[0] & 0xff) << 24)
        | ((digest[1] & 0xff) << 16)
        | ((digest[2] & 0xff) << 8)
        | (digest[3] & 0xff);
  }

  /**
   * The session advisory lock that makes one relay instance the pipeline's active publisher: a
   * stable 64-bit hash of the pipeline and the outbox (the same on every instance and JVM). {@code
   * status} looks for it in {@code pg_locks}.
   */
  public long leaderLockKey(String pipeline) {
    byte[] digest = sha256("outbox-relay:leader:" + pipeline + ":" + displayTable());
    long key = 0;
    for (int i = 0; i < 8; i++) {
      key = (key << 8) | (digest[i] & 0xff);
    }
    return key;
  }

  /**
   * The {@code application_name} of the session an instance holds (or tries) the pipeline's leader
   * lock on: {@code outbox-relay <pipeline> leader <schema.table>}, so that {@code status} counts
   * the instances of this pipeline of this table only. Cut to PostgreSQL's 63 bytes.
   */
  public String leaderSessionName(String pipeline) {
    String name = "outbox-relay " + pipeline + " leader " + displayTable();
    byte[] bytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (bytes.length <= 63) {
      return name;
    }
    // Whole characters only, as PostgreSQL cuts application_name.
    int end = name.length();
    while (name.substring(0, end).getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 63) {
      end--;
    }
    return name.substring(0, end);
  }

  /** The bare name of the trigger function that sends the notification, in {@link #schema()}. */
  public String notifyFunction() {
    return fit("outbox_relay_notify_" + table, "");
  }

  /**
   * {@code base + suffix} when it fits in 63 bytes (or {@code maxBytes}); otherwise {@code base}
   * truncated, {@code _}, an 8-hex-digit hash of the whole {@code base}, then {@code suffix}. Parts
   * are ASCII, so characters are bytes.
   */
  public static String fit(String base, String suffix) {
    return fit(base, suffix, MAX_IDENTIFIER_BYTES);
  }

  private static String fit(String base, String suffix, int maxBytes) {
    if (base.length() + suffix.length() <= maxBytes) {
      return base + suffix;
    }
    int keep = maxBytes - suffix.length() - HASH_CHARS - 1;
    if (keep < 1) {
      // Cannot happen for the suffixes used here; guards future edits.
      throw new IllegalStateException("suffix too long for an identifier: " + suffix);
    }
    return base.substring(0, keep) + "_" + hash(base) + suffix;
  }

  /** An identifier quoted for SQL. Parts are validated, so they never contain a quote. */
  public static String quote(String identifier) {
    return "\"" + identifier + "\"";
  }

  private static String[] split(String name, String key) {
    if (name == null) {
      throw new IllegalArgumentException(key + " must be set, it is null");
    }
    String[] parts = name.split("\\.", -1);
    if (parts.length == 1) {
      checkPart(parts[0], key, name);
      return new String[] {DEFAULT_SCHEMA, parts[0]};
    }
    if (parts.length == 2) {
      checkPart(parts[0], key, name);
      checkPart(parts[1], key, name);
      return parts;
    }
    throw new IllegalArgumentException(
        key + " must be 'name' or 'schema.name', got '" + name + "'");
  }

  private static void checkPart(String part, String what) {
    Objects.requireNonNull(part, what);
    checkPart(part, what, part);
  }

  private static void checkPart(String part, String key, String whole) {
    if (!IDENTIFIER.matcher(part).matches()) {
      throw new IllegalArgumentException(
          key
              + " must be 'name' or 'schema.name' where each part is letters, digits and '_'"
              + " not starting with a digit, got '"
              + whole
              + "'");
    }
    if (part.length() > MAX_IDENTIFIER_BYTES) {
      throw new IllegalArgumentException(
          key
              + " has a part of "
              + part.length()
              + " bytes, PostgreSQL allows at most "
              + MAX_IDENTIFIER_BYTES
              + ", got '"
              + whole
              + "'");
    }
  }

  private static String hash(String value) {
    return HexFormat.of().formatHex(sha256(value)).substring(0, HASH_CHARS);
  }

  private static byte[] sha256(String value) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
