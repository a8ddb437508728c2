package io.outbox.connect;

import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.pipeline.RetryPolicy;
import io.outbox.relay.pipeline.Router;
import io.outbox.relay.pipeline.SettlementPlanner;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.source.polling.PollingSourceProvider;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims the outbox rows of its lanes with the daemon's polling source and hands them to Connect; a
 * lane's claim stays open (its transaction holds the lane lock and the rows) until the worker
 * acknowledged every record ({@link #commitRecord}), then its verdicts are written like the
 * daemon's: published rows marked or deleted, records the worker gave up retried or dead-lettered.
 * The next batch of a lane is claimed only after the previous one was settled.
 */
public final class OutboxSourceTask extends SourceTask {

  private static final Logger log = LoggerFactory.getLogger(OutboxSourceTask.class);

  /** The longest poll() waits for rows or acknowledgements, so that Connect can stop the task. */
  private static final Duration MAX_WAIT = Duration.ofMillis(200);

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration ERROR_PAUSE = Duration.ofSeconds(1);

  private final Map<Integer, LaneBatch> inFlight = new ConcurrentHashMap<>();
  private final Object acks = new Object();
  private String pipeline;
  private int[] lanes;
  private int batchSize;
  private SettlementPlanner planner;
  private Router router;
  private RecordRefusals refusals;
  private DeadLetterCopies deadLetterCopies; // dead-letter.destination, or null
  private Source source;
  private Activation activation;
  private TransactionContext transactions;
  private TaskMetrics metrics;
  private int next; // the lane whose turn it is to wait for rows
  private UnrecordedDeliveries unrecorded;
  // Kafka Connect makes the task: the connector's time comes in here, and reaches the source
  // through its context.
  private final Clock clock = Clock.systemUTC();
  private final Ticker ticker = Ticker.SYSTEM;

  @Override
  public String version() {
    return Version.VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    PipelineSettings p = ConnectorSettings.bindOrThrow(props);
    int index = Integer.parseInt(props.get(ConnectorSettings.TASK_INDEX));
    this.pipeline = p.name();
    this.lanes =
        Arrays.stream(props.get(ConnectorSettings.TASK_LANES).split(","))
            .mapToInt(Integer::parseInt)
            .toArray();
    this.batchSize = p.batchSize();
    this.refusals = new RecordRefusals(pipeline, ConnectorSettings.maxRecordBytes(props));
    this.planner =
        new SettlementPlanner(
            p.retry().maxAttempts(),
            new RetryPolicy(p.retry().backoff(), () -> ThreadLocalRandom.current().nextDouble()));
    this.router = Router.compile(p.destinationTemplate());
    this.deadLetterCopies =
        p.deadLetterDestination() == null
            ? null
            : new DeadLetterCopies(pipeline, Router.compile(p.deadLetterDestination()), refusals);
    this.transactions = context == null ? null : context.transactionContext();
    this.unrecorded =
        new UnrecordedDeliveries(
            pipeline, lanes, transactions == null ? null : context::offsetStorageReader);
    this.metrics = TaskMetrics.of(context);
    String lease = leaseName(pipeline, index);
    DatabaseSettings d = p.database();
    DatabaseSettings database =
        new DatabaseSettings(
            d.url(),
            d.user(),
            d.password(),
            d.properties(),
            d.table(),
            d.deadLetterTable(),
            d.onPublish(),
            lease,
            // One task of the connector runs retention, like the one active daemon.
            index == 0 ? d.retention() : DatabaseSettings.Retention.OFF);
    PluginContext plugin =
        new PluginContext(
            lease,
            p.sourceSettings(),
            ConnectorSettings.SOURCE_PATH,
            p.lanes(),
            p.batchSize(),
            clock,
            ticker,
            null);
    this.source = new PollingSourceProvider().create(plugin, database);
    this.activation = new Activation(source, lease);
    log.info(
        "pipeline {}: task {} claims lane(s) {} of {} as {}{}",
        pipeline,
        index,
        Arrays.toString(lanes),
        p.lanes(),
        lease,
        transactions != null ? ", one transaction per batch" : "");
  }

  /**
   * The lease of task {@code index}: each task is fenced like a daemon instance, so a task that
   * Connect restarted elsewhere takes over from a frozen predecessor without both publishing.
   */
  static String leaseName(String pipeline, int index) {
    return pipeline + ".connect-task-" + index;
  }

  @Override
  public List<SourceRecord> poll() throws InterruptedException {
    List<SourceRecord> out = new ArrayList<>();
    settleCompleted(out);
    if (!out.isEmpty()) {
      return out; // dead letters' copies: their batch is settled once they are acknowledged
    }
    if (!activation.active(MAX_WAIT)) {
      return null;
    }
    for (LaneBatch batch : inFlight.values()) {
      if (batch.nextWaveDue()) {
        out.addAll(batch.nextWave());
      }
    }
    if (!out.isEmpty()) {
      return out;
    }
    settleCompleted(out); // a batch whose last waves were all held back
    try {
      for (int lane : lanes) {
        if (!inFlight.containsKey(lane)) {
          claim(lane, Duration.ZERO, out);
        }
      }
      if (out.isEmpty()) {
        int idle = idleLane();
        if (idle >= 0) {
          // Woken by the insert trigger's notification (any lane's) or after MAX_WAIT.
          claim(idle, MAX_WAIT, out);
        } else {
          awaitAcks(MAX_WAIT);
        }
      }
    } catch (LeadershipLostException e) {
      log.warn("pipeline {}: {}; claiming again once the lease is back", pipeline, e.getMessage());
      activation.lost();
    } catch (SourceException e) {
      log.warn("pipeline {}: {}", pipeline, e.getMessage());
      Thread.sleep(ERROR_PAUSE.toMillis());
    }
    return out.isEmpty() ? null : out;
  }

  private int idleLane() {
    for (int i = 0; i < lanes.length; i++) {
      int lane = lanes[(next + i) % lanes.length];
      if (!inFlight.containsKey(lane)) {
        next = (next + i + 1) % lanes.length;
        return lane;
      }
    }
    return -1;
  }

  private void claim(int lane, Duration wait, List<SourceRecord> out) throws InterruptedException {
    Claim claim = source.claim(lane, batchSize, wait);
    if (claim.events().isEmpty()) {
      claim.release();
      return;
    }
    LaneBatch batch = new LaneBatch(lane, claim);
    Set<String> committed = unrecorded.committedBefore(lane, claim);
    List<OutboxEvent> sending = new ArrayList<>();
    List<OutboxEvent> inKafkaAlready = new ArrayList<>();
    List<String> topics = new ArrayList<>();
    for (OutboxEvent e : claim.events()) {
      String topic = e.defect() == null ? router.route(e) : null;
      String refused = refusals.of(lane, e, topic);
      if (committed.contains(OutboxRecords.delivery(e))) {
        // In Kafka already, whatever a limit changed since says of it.
        batch.judged(e, Verdict.published());
        inKafkaAlready.add(e);
      } else if (refused != null) {
        batch.judged(e, Verdict.permanent(refused));
      } else {
        sending.add(e);
        topics.add(topic);
      }
    }
    if (sending.size() < claim.events().size() && !committed.isEmpty()) {
      log.info(
          "pipeline {} lane {}: {} event(s) were committed to Kafka by a predecessor that did not"
              + " record it; marked published without sending them again",
          pipeline,
          lane,
          inKafkaAlready.size());
    }
    // The offset committed with this batch names the rows found in Kafka already, too: if this
    // settlement fails as well, the next read of the offsets still knows them.
    List<OutboxEvent> inKafka = new ArrayList<>(sending);
    inKafka.addAll(inKafkaAlready);
    String ids = OutboxRecords.batch(inKafka);
    for (int i = 0; i < sending.size(); i++) {
      batch.toSend(
          sending.get(i),
          OutboxRecords.toRecord(pipeline, lane, topics.get(i), sending.get(i), ids));
    }
    batch.deliveries(ids);
    // Without a transaction per batch, a key's events go to the worker one at a time (KeyOrder).
    batch.plan(transactions == null);
    inFlight.put(lane, batch);
    List<SourceRecord> first = batch.nextWave();
    out.addAll(first);
    if (!first.isEmpty() && transactions != null) {
      transactions.commitTransaction(first.get(first.size() - 1)); // one transaction per batch
    }
    if (batch.answered()) {
      settleCompleted(out);
    }
  }

  /**
   * The worker acknowledged a record: {@code metadata} is the broker's ack, or {@code null} when
   * the worker gave the record up ({@code errors.tolerance = all}: the producer could not produce
   * it) or a transform dropped it. Called on the producer's thread: only recorded here, the next
   * wave and the settlement run on the task's thread.
   */
  @Override
  public void commitRecord(SourceRecord record, RecordMetadata metadata) {
    LaneBatch batch = inFlight.get(OutboxRecords.lane(record));
    if (batch == null) {
      return;
    }
    long id = OutboxRecords.id(record);
    if (OutboxRecords.isDeadLetterCopy(record)) {
      if (metadata == null) {
        log.warn(
            "pipeline {}: a dead letter (outbox row {}) not copied to {}: Kafka Connect did not"
                + " produce it",
            pipeline,
            id,
            record.topic());
      }
      batch.copyDone(id);
    } else if (metadata != null) {
      batch.published(id);
    } else {
      batch.failed(
          id,
          "Kafka Connect did not produce the record to "
              + record.topic()
              + " (the producer gave it up or a transform dropped it; see the worker's log)");
    }
    if (batch.complete() || batch.nextWaveDue()) {
      synchronized (acks) {
        acks.notifyAll();
      }
    }
  }

  private void awaitAcks(Duration wait) throws InterruptedException {
    synchronized (acks) {
      for (LaneBatch b : inFlight.values()) {
        if (b.complete() || b.nextWaveDue()) {
          return;
        }
      }
      acks.wait(Math.max(1, wait.toMillis()));
    }
  }

  /**
   * Writes the verdicts of every batch the worker finished with; the lane may claim again. A batch
   * with dead letters first sends their copies to {@code dead-letter.destination} into {@code out}
   * (a transaction of their own) and is settled once they are acknowledged; with {@code out ==
   * null} (stopping) such a batch is left to roll back.
   */
  private synchronized void settleCompleted(List<SourceRecord> out) {
    for (LaneBatch batch : List.copyOf(inFlight.values())) {
      if (!batch.answered()) {
        continue;
      }
      List<Settlement> settlements = batch.settlements(planner);
      if (deadLetterCopies != null && batch.hasUncopiedDeadLetters()) {
        if (out == null) {
          continue;
        }
        int before = out.size();
        deadLetterCopies.copy(batch, batch.takeUncopiedDeadLetters(), batch.deliveries(), out);
        if (out.size() > before && transactions != null) {
          transactions.commitTransaction(out.get(out.size() - 1));
        }
      }
      if (!batch.complete()) {
        continue; // copies waiting for their acknowledgement
      }
      inFlight.remove(batch.lane());
      try {
        metrics.settled(settlements, batch.claim().settle(settlements));
        unrecorded.recorded(batch.lane(), batch.claim().events());
      } catch (SourceException | IllegalStateException e) {
        // The claim's transaction rolled back: its rows are claimed again (duplicates, never loss;
        // with a transaction per batch, the committed offset tells which need no second send).
        unrecorded.settlementFailed(batch.lane());
        log.warn(
            "pipeline {} lane {}: settling {} event(s) failed, they will be sent again: {}",
            pipeline,
            batch.lane(),
            batch.size(),
            e.getMessage());
      }
    }
  }

  /**
   * Called on the task's thread once Connect flushed the producer: settles what the worker
   * acknowledged, then closes the source; claims still waiting roll back and are claimed again.
   */
  @Override
  public void stop() {
    if (source == null) {
      return;
    }
    Deadline deadline = ticker.deadline(STOP_TIMEOUT);
    inFlight.values().forEach(LaneBatch::giveUpTheRemainingWaves);
    try {
      while (!inFlight.isEmpty() && !deadline.passed()) {
        settleCompleted(null);
        if (inFlight.values().stream().allMatch(LaneBatch::answered)) {
          break; // only batches whose dead letters' copies cannot be sent any more: roll back
        }
        if (!inFlight.isEmpty()) {
          awaitAcks(MAX_WAIT);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!inFlight.isEmpty()) {
      log.info(
          "pipeline {}: stopping with {} batch(es) unacknowledged on lane(s) {}; they roll back",
          pipeline,
          inFlight.size(),
          inFlight.keySet().stream().map(String::valueOf).collect(Collectors.joining(",")));
      for (LaneBatch b : List.copyOf(inFlight.values())) {
        inFlight.remove(b.lane());
        b.claim().release();
      }
    }
    activation.close();
    source.close(Duration.ofSeconds(5));
  }
}
