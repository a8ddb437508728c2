package io.outbox.bench;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.source.postgres.LanePositions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The database of one bench run: created fresh (with the outbox tables) by {@link #create}, dropped
 * by {@link #close} together with the replication slot the Debezium baseline may have created. All
 * SQL of the harness lives here.
 */
final class BenchDatabase implements AutoCloseable {
  static final String TABLE = "outbox";

  private static final OutboxStatus STATUS = LanePositions.status(OutboxTables.of(TABLE));

  /** The Debezium baselines' publication: every column (the event router reads them). */
  static final String PUBLICATION = "bench_outbox";

  /**
   * The relay's publication, as the relay creates its own (cdc-source's {@code Publication}): the
   * columns its stream carries (PostgreSQL 15+; a claim reads the rest of the row).
   */
  static final String RELAY_PUBLICATION = "bench_outbox_relay";

  private static final String RELAY_COLUMNS = "(id, aggregate_type, aggregate_id, available_at)";
  private static final int LOAD_CHUNK = 1000;

  private final String serverUrl;
  private final String user;
  private final String password;
  private final String name;
  private final PartitionedLayout layout;
  private final OutboxWriter writer = OutboxWriter.forTable(TABLE);

  private BenchDatabase(
      String serverUrl, String user, String password, String name, PartitionedLayout layout) {
    this.serverUrl = serverUrl;
    this.user = user;
    this.password = password;
    this.name = name;
    this.layout = layout;
  }

  /**
   * Creates database {@code name} on the server of {@code serverUrl} (a JDBC URL ending in {@code
   * /<some database>}, e.g. {@code jdbc:postgresql://127.0.0.1:5432/postgres}) and migrates it,
   * with what settlement by position needs when {@code byPosition}.
   */
  static BenchDatabase create(
      String serverUrl,
      String user,
      String password,
      String name,
      PartitionedLayout layout,
      boolean byPosition)
      throws SQLException {
    BenchDatabase db = new BenchDatabase(serverUrl, user, password, name, layout);
    try (Connection c = DriverManager.getConnection(serverUrl, user, password);
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      st.execute("CREATE DATABASE " + name);
    }
    new Migrator(OutboxTables.of(TABLE), layout, byPosition).migrate(db.url(), user, password);
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      // Counts dead tuples exactly (TableState); PostgreSQL's contrib, not everywhere.
      st.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple");
    } catch (SQLException e) {
      // the statistics' count it is
    }
    return db;
  }

  String name() {
    return name;
  }

  /** The outbox's partitioned layout, or {@code null} for the plain one. */
  PartitionedLayout layout() {
    return layout;
  }

  String url() {
    return serverUrl.replaceFirst("/[^/?]*(\\?.*)?$", "/" + name);
  }

  String user() {
    return user;
  }

  String password() {
    return password;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(), user, password);
  }

  /** Empties the outbox (between runs that each need their own backlog). */
  void truncate() throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("TRUNCATE " + TABLE);
      st.execute("VACUUM ANALYZE " + TABLE);
    }
  }

  /** Enables or disables the migration's insert trigger (the NOTIFY wake-up). */
  void notifyTrigger(boolean enabled) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute(
          "ALTER TABLE "
              + TABLE
              + (enabled ? " ENABLE" : " DISABLE")
              + " TRIGGER outbox_relay_notify");
    }
  }

  /**
   * Inserts events {@code 0..events-1} of the workload in chunks of 1,000 per transaction, in
   * order, so that each key's events are in {@code id} order; then analyzes the table, as
   * autovacuum would have by the time a real backlog is drained.
   *
   * @return the event ids by event number
   */
  UUID[] loadBacklog(Workload workload) throws SQLException {
    UUID[] ids = insertBacklog(workload, Progress.NONE);
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("VACUUM ANALYZE " + TABLE);
    }
    return ids;
  }

  /** What {@link #insertBacklog} tells about its commits, from its own thread. */
  interface Progress {
    Progress NONE = new Progress() {};

    /** A chunk's commit is about to be sent: {@code rows} once it succeeds. */
    default void committing(long rows) {}

    /** A chunk's commit returned: {@code rows} committed in all. */
    default void committed(long rows) {}
  }

  /**
   * The rows of {@link #loadBacklog} in its transactions of 1,000, without the analyze after them.
   *
   * @return the event ids by event number
   */
  UUID[] insertBacklog(Workload workload, Progress progress) throws SQLException {
    UUID[] ids = new UUID[workload.events()];
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      List<OutboxMessage> chunk = new ArrayList<>(LOAD_CHUNK);
      for (int i = 0; i < workload.events(); i++) {
        chunk.add(message(workload, i));
        if (chunk.size() == LOAD_CHUNK || i == workload.events() - 1) {
          List<UUID> written = writer.writeAll(c, chunk);
          progress.committing(i + 1L);
          c.commit();
          progress.committed(i + 1L);
          for (int j = 0; j < written.size(); j++) {
            ids[i - written.size() + 1 + j] = written.get(j);
          }
          chunk.clear();
        }
      }
      c.setAutoCommit(true);
    }
    return ids;
  }

  /** Event {@code i} of the workload, as an application would write it. */
  static OutboxMessage message(Workload workload, long i) {
    return OutboxMessage.builder()
        .aggregate(Workload.AGGREGATE_TYPE, workload.key(i))
        .eventType(Workload.EVENT_TYPE)
        .payload(workload.payload(i))
        .build();
  }

  /** The writer applications would use; thread-safe. */
  OutboxWriter writer() {
    return writer;
  }

  /**
   * Rows not yet published, as {@code status} counts them: not marked (mark), not deleted (delete),
   * or not covered by the bench pipeline's lane positions (position).
   */
  long pending(Connection c) throws SQLException {
    return STATUS.backlog(c, RelayUnderTest.PIPELINE).pending();
  }

  /**
   * What the outbox weighs: its rows, its dead tuples (row versions the relay's marks and deletes
   * left for vacuum), the heap's and the indexes' size, and how often autovacuum has run on it.
   *
   * @param exact whether the dead tuples were counted by {@code pgstattuple} (a scan of the table),
   *     not taken from PostgreSQL's statistics, which reach the counters late
   */
  record TableState(
      long rows,
      long deadTuples,
      long heapBytes,
      long indexBytes,
      long autovacuums,
      boolean exact) {

    /** One line for the report, with the autovacuum runs since {@code before}. */
    String since(TableState before) {
      return String.format(
          java.util.Locale.ROOT,
          "%,d rows, %,d dead tuples%s, heap %.1f MiB, indexes %.1f MiB, autovacuum ran %d times",
          rows,
          deadTuples,
          exact ? "" : " (statistics)",
          heapBytes / 1048576.0,
          indexBytes / 1048576.0,
          autovacuums - before.autovacuums);
    }
  }

  /**
   * The outbox's {@link TableState} now. Without the {@code pgstattuple} extension the dead tuples
   * are the statistics' count, which other sessions' work reaches within about 10 s.
   */
  TableState tableState() throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      boolean exact;
      try (ResultSet rs =
          st.executeQuery("SELECT 1 FROM pg_extension WHERE extname = 'pgstattuple'")) {
        exact = rs.next();
      }
      // Summed over the partitions of a partitioned outbox (a plain one is its own only leaf).
      String dead = exact ? "(SELECT dead_tuple_count FROM pgstattuple(t.relid))" : "n_dead_tup";
      try (ResultSet rs =
          st.executeQuery(
              "SELECT (SELECT count(*) FROM "
                  + TABLE
                  + "), coalesce(sum("
                  + dead
                  + "), 0), coalesce(sum(pg_relation_size(t.relid)), 0),"
                  + " coalesce(sum(pg_indexes_size(t.relid)), 0),"
                  + " coalesce(sum(s.autovacuum_count), 0)"
                  + " FROM (SELECT relid FROM pg_partition_tree('"
                  + TABLE
                  + "') WHERE isleaf UNION ALL SELECT '"
                  + TABLE
                  + "'::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree('"
                  + TABLE
                  + "'))) t JOIN pg_stat_user_tables s ON s.relid = t.relid")) {
        rs.next();
        return new TableState(
            rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5), exact);
      }
    }
  }

  /** Rows in the dead-letter table (a bench run expects none). */
  long deadLetters() throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM outbox_dead_letter")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** {@code published_at} of these events, in microseconds since the epoch, by event id. */
  Map<UUID, Long> publishedAtMicros(List<UUID> eventIds) throws SQLException {
    Map<UUID, Long> result = new HashMap<>();
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT event_id, (extract(epoch FROM published_at) * 1000000)::bigint FROM "
                    + TABLE
                    + " WHERE published_at IS NOT NULL AND event_id = ANY(?)")) {
      ps.setArray(1, c.createArrayOf("uuid", eventIds.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          result.put(rs.getObject(1, UUID.class), rs.getLong(2));
        }
      }
    }
    return result;
  }

  /**
   * A publication of the outbox and a pgoutput slot, created before a backlog is inserted so that a
   * CDC reader finds the backlog in the WAL (not in a snapshot); the relay's ({@code relay} true,
   * {@link #RELAY_PUBLICATION}) or the Debezium baselines' ({@link #PUBLICATION}).
   */
  void createSlot(String slot, boolean relay) throws SQLException {
    String publication = relay ? RELAY_PUBLICATION : PUBLICATION;
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      try (ResultSet rs =
          st.executeQuery("SELECT 1 FROM pg_publication WHERE pubname = '" + publication + "'")) {
        if (!rs.next()) {
          boolean columnLists = c.getMetaData().getDatabaseMajorVersion() >= 15;
          st.execute(
              "CREATE PUBLICATION "
                  + publication
                  + " FOR TABLE "
                  + TABLE
                  + (relay && columnLists ? " " + RELAY_COLUMNS : "")
                  // A partitioned outbox (--layout partitioned) streams under the table's name.
                  + " WITH (publish = 'insert', publish_via_partition_root = true)");
        }
      }
      st.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    }
  }

  /** Whether a replication connection streams from the slot now (its {@code active} flag). */
  boolean slotActive(String slot) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT active FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /** Drops the slot (waiting for its reader to let go), if it exists; the publication stays. */
  void dropSlot(String slot) throws SQLException, InterruptedException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      for (int i = 0; i < 300; i++) {
        try (ResultSet rs =
            st.executeQuery(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
          if (!rs.next()) {
            break;
          }
          if (rs.getObject(1) == null) {
            st.execute("SELECT pg_drop_replication_slot('" + slot + "')");
            break;
          }
          st.execute("SELECT pg_terminate_backend(" + rs.getInt(1) + ")");
        }
        Thread.sleep(100);
      }
    }
  }

  /** Deletes the CDC source's stored offsets (its catch-up marker too) of every pipeline. */
  void forgetCdcOffsets() throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("DELETE FROM " + OutboxTables.of(TABLE).qualifiedOffsetsTable());
    }
  }

  /** Drops the database and any replication slot left in it. */
  @Override
  public void close() throws SQLException {
    try (Connection c = DriverManager.getConnection(serverUrl, user, password);
        Statement st = c.createStatement()) {
      try (ResultSet rs =
          st.executeQuery(
              "SELECT slot_name, active_pid FROM pg_replication_slots WHERE database = '"
                  + name
                  + "'")) {
        List<String> slots = new ArrayList<>();
        while (rs.next()) {
          slots.add(rs.getString(1));
        }
        for (String slot : slots) {
          st.execute(
              "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                  + " WHERE slot_name = '"
                  + slot
                  + "' AND active_pid IS NOT NULL");
          st.execute("SELECT pg_drop_replication_slot('" + slot + "')");
        }
      }
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }
}
