package io.outbox.schema;

import static io.outbox.client.OutboxTables.fit;
import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The partitioned layout of an outbox ({@code layout = partitioned}): {@code count} partitions that
 * take ids in turn, {@code size} consecutive ids each, so that ids come back to a partition only
 * after every other one has been filled. Retention empties a partition at once ({@code TRUNCATE})
 * once every row in it is settled and old enough, instead of deleting rows: no dead tuples, no
 * vacuum debt. Inserts never fail for want of a partition: every id has one.
 *
 * <p>{@link #apply} converts the plain table {@code migrate} made (or found) in one transaction:
 * the table becomes the partition {@code <table>_p_before} holding the ids it has (dropped when
 * empty), a partitioned table takes its name, columns, defaults, checks, indexes, grants, notify
 * trigger and publications, and its id comes from a sequence continuing the old numbering. The
 * partition key is {@code CASE WHEN id < base THEN -1 ELSE ((id - base) / size) % count END}.
 *
 * @param count partitions in the cycle, 2..64
 * @param size ids per partition, 1,000..1,000,000,000
 */
public record PartitionedLayout(int count, long size) {

  /** The fewest partitions in a cycle. */
  public static final int MIN_COUNT = 2;

  /** The most partitions in a cycle. */
  public static final int MAX_COUNT = 64;

  /** The fewest ids per partition. */
  public static final long MIN_SIZE = 1_000;

  /** The most ids per partition. */
  public static final long MAX_SIZE = 1_000_000_000;

  /** How long {@link #apply} waits for the table's lock before it gives up. */
  static final String LOCK_TIMEOUT = "10s";

  private static final Pattern KEY =
      Pattern.compile(
          "(?s)LIST \\(\\(\\s*CASE\\s+WHEN \\(\\S+ < (-?\\d+)\\) THEN .*?ELSE \\(\\(\\(\\S+ -"
              + " -?\\d+\\) / (\\d+)\\) % \\((\\d+)\\)::bigint\\)\\s+END\\)\\)");

  public PartitionedLayout {
    if (count < MIN_COUNT || count > MAX_COUNT) {
      throw new IllegalArgumentException(
          "partitions.count must be " + MIN_COUNT + ".." + MAX_COUNT + ", not " + count);
    }
    if (size < MIN_SIZE || size > MAX_SIZE) {
      throw new IllegalArgumentException(
          "partitions.size must be " + MIN_SIZE + ".." + MAX_SIZE + ", not " + size);
    }
  }

  /** What {@link #apply} did. */
  public enum Outcome {
    /** The table was already partitioned so. */
    ALREADY,
    /** An empty table was replaced by the partitioned one. */
    CREATED,
    /** A table with rows became the first partition of the partitioned one. */
    CONVERTED
  }

  /** The partition key for ids from {@code base} on; lower ids map to {@code -1}. */
  String key(String id, long base) {
    return "(CASE WHEN "
        + id
        + " < "
        + base
        + " THEN -1 ELSE (("
        + id
        + " - "
        + base
        + ") / "
        + size
        + ") % "
        + count
        + " END)";
  }

  /**
   * The layout of a partitioned table from its key ({@code pg_get_partkeydef}), or {@code null}
   * when outbox-relay did not make it.
   */
  static PartitionedLayout parse(String keyDefinition) {
    Matcher m = KEY.matcher(keyDefinition == null ? "" : keyDefinition.strip());
    if (!m.matches()) {
      return null;
    }
    try {
      return new PartitionedLayout(Integer.parseInt(m.group(3)), Long.parseLong(m.group(2)));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * Makes {@code tables}' outbox partitioned so, in one transaction on {@code c} (left in
   * auto-commit mode after). Refuses, changing nothing, a table other objects depend on (views,
   * foreign keys, rules, triggers of its own, inheritance), one partitioned otherwise, or one whose
   * id has no sequence.
   *
   * @throws SQLException naming what is in the way
   */
  Outcome apply(Connection c, OutboxTables tables) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try {
      Outcome outcome = convert(c, tables);
      c.commit();
      return outcome;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  private Outcome convert(Connection c, OutboxTables tables) throws SQLException {
    String outbox = tables.qualifiedTable();
    String shown = tables.displayTable();
    String idName = tables.columns().id();
    String id = quote(idName);
    execute(c, "SET LOCAL lock_timeout = '" + LOCK_TIMEOUT + "'");
    execute(c, "LOCK TABLE " + outbox + " IN ACCESS EXCLUSIVE MODE");
    long oid = longValue(c, "SELECT to_regclass(?)::oid::bigint", outbox);
    String kind = string(c, "SELECT relkind::text FROM pg_class WHERE oid = ?::oid", oid);
    if ("p".equals(kind)) {
      PartitionedLayout found = parse(string(c, "SELECT pg_get_partkeydef(?::oid)", oid));
      if (found == null) {
        throw refused(shown, "it is partitioned by a key outbox-relay does not make");
      }
      if (!found.equals(this)) {
        throw refused(
            shown,
            "it is partitioned into "
                + found.count
                + " partitions of "
                + found.size
                + " ids, the settings ask for "
                + count
                + " of "
                + size
                + "; a layout is not changed in place");
      }
      return Outcome.ALREADY;
    }
    checkNothingDepends(c, oid, shown);

    String schema = quote(tables.schema());
    String legacyName = fit(tables.table(), "_p_before");
    String legacy = schema + "." + quote(legacyName);
    long rows = longValue(c, "SELECT count(*) FROM (SELECT 1 FROM " + outbox + " LIMIT 1) t");
    String sequenceOf = string(c, "SELECT pg_get_serial_sequence(?, ?)", outbox, idName);
    if (sequenceOf == null) {
      throw refused(shown, "its column " + idName + " takes no value from a sequence");
    }
    boolean identity =
        !string(
                c,
                "SELECT attidentity::text FROM pg_attribute WHERE attrelid = ?::oid AND attname = ?",
                oid,
                idName)
            .isEmpty();
    long base =
        Math.max(
            longValue(
                c,
                "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM "
                    + sequenceOf),
            longValue(c, "SELECT coalesce(max(" + id + "), 0) + 1 FROM " + outbox));
    List<String> indexes = indexDefinitions(c, oid);
    List<String[]> uniques = uniqueConstraints(c, oid);
    List<String> reloptions =
        strings(c, "SELECT unnest(reloptions) FROM pg_class WHERE oid = ?::oid", oid);
    List<String[]> grants =
        rows(
            c,
            "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END,"
                + " a.privilege_type"
                + " FROM pg_class c, aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid ="
                + " a.grantee WHERE c.oid = ?::oid",
            oid);
    String owner =
        string(
            c,
            "SELECT quote_ident(pg_get_userbyid(relowner)) FROM pg_class WHERE oid = ?::oid",
            oid);
    List<String[]> publications = publications(c, oid);
    // A check NOT VALID (rows from before it may break it) is copied by LIKE as a valid one, which
    // the old table could not be attached under: it is added back NOT VALID once it is attached.
    List<String[]> notValid =
        rows(
            c,
            "SELECT quote_ident(conname), pg_get_constraintdef(oid) FROM pg_constraint"
                + " WHERE conrelid = ?::oid AND contype = 'c' AND NOT convalidated ORDER BY conname",
            oid);

    // The old table steps aside, its names with it.
    execute(c, "ALTER TABLE " + outbox + " RENAME TO " + quote(legacyName));
    for (String index : strings(c, INDEX_NAMES, oid)) {
      String suffix =
          index.startsWith(tables.table()) && index.length() > tables.table().length()
              ? index.substring(tables.table().length())
              : "_" + index;
      execute(
          c,
          "ALTER INDEX "
              + schema
              + "."
              + quote(index)
              + " RENAME TO "
              + quote(fit(legacyName, suffix)));
    }
    execute(c, "DROP TRIGGER IF EXISTS outbox_relay_notify ON " + legacy);
    for (String[] p : publications) {
      execute(c, "ALTER PUBLICATION " + quote(p[0]) + " DROP TABLE " + legacy);
    }
    String sequence =
        identity ? schema + "." + quote(fit(tables.table(), "_" + idName + "_seq")) : sequenceOf;
    if (identity) {
      execute(c, "ALTER TABLE " + legacy + " ALTER COLUMN " + id + " DROP IDENTITY");
      execute(c, "CREATE SEQUENCE " + sequence + " AS bigint START WITH " + base);
    } else {
      execute(c, "ALTER TABLE " + legacy + " ALTER COLUMN " + id + " DROP DEFAULT");
      execute(c, "ALTER SEQUENCE " + sequence + " OWNED BY NONE");
      longValue(c, "SELECT setval(?::regclass, ?, false)", sequence, base);
    }

    // The partitioned table under the old name.
    execute(
        c,
        "CREATE TABLE "
            + outbox
            + " (LIKE "
            + legacy
            + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING STORAGE"
            + " INCLUDING COMMENTS)"
            + " PARTITION BY LIST ("
            + key(id, base)
            + ")");
    execute(
        c,
        "ALTER TABLE "
            + outbox
            + " ALTER COLUMN "
            + id
            + " SET DEFAULT nextval('"
            + sequence.replace("'", "''")
            + "'::regclass)");
    execute(c, "ALTER SEQUENCE " + sequence + " OWNED BY " + outbox + "." + id);
    for (String[] check : notValid) {
      execute(c, "ALTER TABLE " + outbox + " DROP CONSTRAINT " + check[0]);
    }
    for (String index : indexes) {
      execute(c, index); // the old definitions name the new table
    }
    List<String> partitions = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = fit(tables.table(), "_p" + i);
      String partition = schema + "." + quote(name);
      partitions.add(partition);
      execute(
          c,
          "CREATE TABLE " + partition + " PARTITION OF " + outbox + " FOR VALUES IN (" + i + ")");
      for (String[] unique : uniques) {
        boolean primary = "p".equals(unique[0]);
        String suffix = primary ? "_pkey" : "_" + unique[2] + "_key";
        execute(
            c,
            "ALTER TABLE "
                + partition
                + " ADD CONSTRAINT "
                + quote(fit(name, suffix))
                + (primary ? " PRIMARY KEY (" : " UNIQUE (")
                + unique[1]
                + ")");
      }
      if (!reloptions.isEmpty()) {
        execute(c, "ALTER TABLE " + partition + " SET (" + String.join(", ", reloptions) + ")");
      }
    }
    if (rows > 0) {
      execute(c, "ALTER TABLE " + outbox + " ATTACH PARTITION " + legacy + " FOR VALUES IN (-1)");
      partitions.add(legacy);
    } else {
      execute(c, "DROP TABLE " + legacy);
    }
    for (String[] check : notValid) {
      execute(c, "ALTER TABLE " + outbox + " ADD CONSTRAINT " + check[0] + " " + check[1]);
    }
    execute(
        c,
        "CREATE TRIGGER outbox_relay_notify AFTER INSERT ON "
            + outbox
            + " FOR EACH STATEMENT EXECUTE FUNCTION "
            + schema
            + "."
            + quote(tables.notifyFunction())
            + "()");
    grant(c, outbox, partitions, sequence, grants, owner);
    for (String[] p : publications) {
      // Changes of the partitions reach the stream under the table's name, as before.
      execute(c, "ALTER PUBLICATION " + quote(p[0]) + " SET (publish_via_partition_root = true)");
      execute(
          c,
          "ALTER PUBLICATION "
              + quote(p[0])
              + " ADD TABLE "
              + outbox
              + (p[1] == null ? "" : " (" + p[1] + ")"));
    }
    return rows > 0 ? Outcome.CONVERTED : Outcome.CREATED;
  }

  private static final String INDEX_NAMES =
      "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
          + " WHERE i.indrelid = ?::oid ORDER BY c.relname";

  /** The definitions of the table's indexes that back no unique or primary key constraint. */
  private static List<String> indexDefinitions(Connection c, long oid) throws SQLException {
    return strings(
        c,
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i"
            + " WHERE i.indrelid = ?::oid AND NOT i.indisunique ORDER BY i.indexrelid",
        oid);
  }

  /** Each primary key and unique constraint: kind, quoted column list, names joined by '_'. */
  private static List<String[]> uniqueConstraints(Connection c, long oid) throws SQLException {
    return rows(
        c,
        "SELECT con.contype::text,"
            + " string_agg(quote_ident(a.attname), ', ' ORDER BY k.n),"
            + " string_agg(a.attname, '_' ORDER BY k.n)"
            + " FROM pg_constraint con"
            + " CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, n)"
            + " JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum"
            + " WHERE con.conrelid = ?::oid AND con.contype IN ('p', 'u')"
            + " GROUP BY con.oid, con.contype ORDER BY con.contype, con.oid",
        oid);
  }

  /** The publications that name the table: name, quoted column list or null. */
  private static List<String[]> publications(Connection c, long oid) throws SQLException {
    boolean columnLists = c.getMetaData().getDatabaseMajorVersion() >= 15;
    return rows(
        c,
        "SELECT p.pubname, "
            + (columnLists
                ? "(SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)"
                    + " FROM pg_attribute a WHERE a.attrelid = r.prrelid"
                    + " AND a.attnum = ANY(r.prattrs::int2[]))"
                : "NULL::text")
            + " FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid"
            + " WHERE r.prrelid = ?::oid ORDER BY p.pubname",
        oid);
  }

  /** Whatever would silently stay with the old table or break: refused with its names. */
  private static void checkNothingDepends(Connection c, long oid, String shown)
      throws SQLException {
    Map<String, String> queries = new LinkedHashMap<>();
    queries.put(
        "views or rules use it",
        "SELECT DISTINCT r.ev_class::regclass::text FROM pg_depend d"
            + " JOIN pg_rewrite r ON r.oid = d.objid"
            + " WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = ?::oid"
            + " AND r.ev_class <> d.refobjid");
    queries.put(
        "foreign keys point to or from it",
        "SELECT conname || ' on ' || conrelid::regclass::text FROM pg_constraint"
            + " WHERE contype = 'f' AND (confrelid = ?::oid OR conrelid = ?::oid)");
    queries.put(
        "it has rules of its own",
        "SELECT rulename FROM pg_rewrite WHERE ev_class = ?::oid AND rulename <> '_RETURN'");
    queries.put(
        "it has row security policies", "SELECT polname FROM pg_policy WHERE polrelid = ?::oid");
    queries.put(
        "it has column grants",
        "SELECT attname FROM pg_attribute WHERE attrelid = ?::oid AND attacl IS NOT NULL");
    queries.put(
        "it has triggers of its own",
        "SELECT tgname FROM pg_trigger WHERE tgrelid = ?::oid AND NOT tgisinternal"
            + " AND tgname <> 'outbox_relay_notify'");
    queries.put(
        "it takes part in inheritance",
        "SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = ?::oid OR inhrelid = ?::oid");
    for (Map.Entry<String, String> q : queries.entrySet()) {
      String sql = q.getValue();
      int params = sql.length() - sql.replace("?", "").length();
      Object[] values = new Object[params];
      java.util.Arrays.fill(values, oid);
      List<String> found = strings(c, sql, values);
      if (!found.isEmpty()) {
        throw refused(shown, q.getKey() + " (" + String.join(", ", found) + ")");
      }
    }
  }

  /** The old table's grants on the new one and its partitions; its owner owns them all. */
  private static void grant(
      Connection c,
      String outbox,
      List<String> partitions,
      String sequence,
      List<String[]> grants,
      String owner)
      throws SQLException {
    boolean ownerDiffers = !owner.equals(string(c, "SELECT quote_ident(current_user::text)"));
    if (ownerDiffers) {
      execute(c, "ALTER TABLE " + outbox + " OWNER TO " + owner);
      execute(c, "ALTER SEQUENCE " + sequence + " OWNER TO " + owner);
      for (String p : partitions) {
        execute(c, "ALTER TABLE " + p + " OWNER TO " + owner);
      }
    }
    for (String[] g : grants) {
      String role = g[0];
      String privilege = g[1];
      if (role.equals(owner)) {
        continue;
      }
      execute(c, "GRANT " + privilege + " ON " + outbox + " TO " + role);
      if ("INSERT".equals(privilege)) {
        execute(c, "GRANT USAGE ON SEQUENCE " + sequence + " TO " + role);
      }
      if ("DELETE".equals(privilege)) {
        // Retention empties a settled partition with TRUNCATE where it deleted rows.
        for (String p : partitions) {
          execute(c, "GRANT TRUNCATE ON " + p + " TO " + role);
        }
      }
    }
  }

  private static SQLException refused(String table, String why) {
    return new SQLException(
        "cannot partition " + table + ": " + why + "; nothing was changed", "55000");
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... values)
      throws SQLException {
    PreparedStatement s = c.prepareStatement(sql);
    for (int i = 0; i < values.length; i++) {
      s.setObject(i + 1, values[i]);
    }
    return s;
  }

  private static List<String[]> rows(Connection c, String sql, Object... values)
      throws SQLException {
    List<String[]> rows = new ArrayList<>();
    try (PreparedStatement s = prepare(c, sql, values);
        ResultSet r = s.executeQuery()) {
      int columns = r.getMetaData().getColumnCount();
      while (r.next()) {
        String[] row = new String[columns];
        for (int i = 0; i < columns; i++) {
          row[i] = r.getString(i + 1);
        }
        rows.add(row);
      }
    }
    return rows;
  }

  private static List<String> strings(Connection c, String sql, Object... values)
      throws SQLException {
    List<String> values0 = new ArrayList<>();
    for (String[] row : rows(c, sql, values)) {
      values0.add(row[0]);
    }
    return values0;
  }

  private static String string(Connection c, String sql, Object... values) throws SQLException {
    List<String> found = strings(c, sql, values);
    return found.isEmpty() ? null : found.get(0);
  }

  private static long longValue(Connection c, String sql, Object... values) throws SQLException {
    String value = Objects.requireNonNull(string(c, sql, values), sql);
    return Long.parseLong(value);
  }
}
