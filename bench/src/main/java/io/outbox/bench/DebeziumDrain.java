package io.outbox.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code debezium} baseline's drain: a replication slot is created, the backlog inserted (so it
 * is in the WAL), then {@link DebeziumBaseline} is started in its own JVM and followed through the
 * acknowledgement lines it prints until every event is acknowledged by Kafka.
 */
final class DebeziumDrain {
  private static final Pattern SERVER = Pattern.compile("jdbc:postgresql://([^:/]+)(?::(\\d+))?/");

  private DebeziumDrain() {}

  static Results.Throughput run(
      boolean tuned,
      Path dir,
      String classpath,
      List<String> jvmOptions,
      BenchDatabase db,
      Brokers brokers,
      Workload workload,
      Duration timeout)
      throws Exception {
    String mode = tuned ? "tuned" : "default";
    String slot = db.name() + "_" + mode;
    Matcher server = SERVER.matcher(db.url());
    if (!server.lookingAt()) {
      throw new IllegalArgumentException("cannot read host and port from " + db.url());
    }
    db.truncate();
    db.createSlot(slot, false);
    try {
      db.loadBacklog(workload);
      BlockingQueue<String> lines = new LinkedBlockingQueue<>();
      long launched = System.nanoTime();
      try (ChildJvm child =
          ChildJvm.start(
              "debezium-" + mode,
              classpath,
              jvmOptions,
              DebeziumBaseline.class.getName(),
              List.of(
                  mode,
                  server.group(1),
                  server.group(2) == null ? "5432" : server.group(2),
                  db.name(),
                  db.user(),
                  slot,
                  BenchDatabase.PUBLICATION,
                  brokers.prefix(),
                  brokers.kafkaBootstrap()),
              dir.resolve("debezium-" + mode + ".log"),
              Map.of("OUTBOX_BENCH_DB_PASSWORD", db.password()),
              line -> {
                if (line.startsWith(DebeziumBaseline.ACKED)
                    || line.startsWith(DebeziumBaseline.FAILED)) {
                  lines.add(line);
                }
              })) {
        return follow(mode, child, lines, workload.events(), launched, timeout);
      }
    } finally {
      db.dropSlot(slot);
    }
  }

  private static Results.Throughput follow(
      String mode,
      ChildJvm child,
      BlockingQueue<String> lines,
      long events,
      long launched,
      Duration timeout)
      throws InterruptedException {
    long deadline = launched + timeout.toNanos();
    long firstMicros = 0;
    long firstTotal = 0;
    ProcSample firstSample = null;
    MachineCpu machineFirst = null;
    while (System.nanoTime() < deadline) {
      String line = lines.poll(200, TimeUnit.MILLISECONDS);
      if (line == null) {
        child.checkAlive();
        continue;
      }
      if (line.startsWith(DebeziumBaseline.FAILED)) {
        throw new IllegalStateException("debezium " + mode + ": " + line + "\n" + child.tail());
      }
      String[] f = line.substring(DebeziumBaseline.ACKED.length()).split(" ");
      long total = Long.parseLong(f[0]);
      long micros = Long.parseLong(f[1]);
      if (firstSample == null) {
        firstSample = child.sample();
        machineFirst = MachineCpu.now();
        firstMicros = micros;
        firstTotal = total;
      }
      if (total >= events) {
        long end = System.nanoTime();
        ProcSample last = child.sample();
        MachineCpu machineLast = MachineCpu.now();
        long counted = total - firstTotal;
        long nanos = (micros - firstMicros) * 1000;
        if (counted == 0) {
          counted = total;
          nanos = end - launched;
          firstSample = new ProcSample(0, 0);
          machineFirst = null;
        }
        return Results.Throughput.of(
            "debezium " + mode,
            "Debezium embedded engine + EventRouter + KafkaProducer awaiting each batch's acks ("
                + DebeziumBaseline.describe(mode.equals("tuned"))
                + "): events acked per second from the first acked batch to the last",
            counted,
            Math.max(1, nanos),
            total / ((end - launched) / 1e9),
            Results.Footprint.between(firstSample, last, counted, machineFirst, machineLast));
      }
    }
    throw new IllegalStateException(
        "debezium " + mode + ": not all " + events + " events acked within " + timeout);
  }
}
