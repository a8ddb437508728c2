package io.outbox.sink.kafka;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.PipelineThreads;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's Kafka clients: the shared producer, created on first use and replaced after a fatal
 * error, and an admin client that probes whether the cluster answers and, before a missing topic is
 * called permanent, whether it really is missing ({@link TopicCheck}).
 */
final class KafkaClients implements TopicCheck.Broker {

  /** Builds the clients; replaced in tests. */
  interface Factory {
    Producer<String, byte[]> producer(Map<String, Object> config);

    Admin admin(Map<String, Object> config);
  }

  /** The real Kafka clients. */
  static final Factory KAFKA =
      new Factory() {
        @Override
        public Producer<String, byte[]> producer(Map<String, Object> config) {
          return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
        }

        @Override
        public Admin admin(Map<String, Object> config) {
          return Admin.create(config);
        }
      };

  private static final Logger log = LoggerFactory.getLogger(KafkaClients.class);
  private static final String AUTO_CREATE_TOPICS = "auto.create.topics.enable";

  private final String pipeline;
  private final Map<String, Object> producerConfig;
  private final Map<String, Object> adminConfig;
  private final Factory factory;
  private final Ticker ticker;
  private final Object lock = new Object();
  private Producer<String, byte[]> producer; // guarded by lock

  /** Producers {@link #stop}ped, with why; weak, so that a closed producer is not kept. */
  private final Map<Producer<String, byte[]>, String> stopped = new WeakHashMap<>(); // lock

  private Admin admin; // guarded by lock
  private boolean closed; // guarded by lock

  KafkaClients(
      String pipeline,
      Map<String, Object> producerConfig,
      Map<String, Object> adminConfig,
      Factory factory,
      Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.producerConfig = Map.copyOf(producerConfig);
    this.adminConfig = Map.copyOf(adminConfig);
    this.factory = factory;
  }

  /**
   * The current producer, created if there is none.
   *
   * @throws IllegalStateException once closed
   * @throws org.apache.kafka.common.KafkaException when the producer cannot be built
   */
  Producer<String, byte[]> producer() {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("the Kafka sink of pipeline " + pipeline + " is closed");
      }
      if (producer == null) {
        producer = factory.producer(producerConfig);
        log.info(
            "Kafka producer {} of pipeline {} created for {} (acks=all, idempotent, linger.ms={},"
                + " delivery.timeout.ms={})",
            producerConfig.get(ProducerProperties.CLIENT_ID),
            pipeline,
            producerConfig.get("bootstrap.servers"),
            producerConfig.get(ProducerProperties.LINGER),
            producerConfig.get(ProducerProperties.DELIVERY_TIMEOUT));
      }
      return producer;
    }
  }

  /**
   * Drops {@code broken} if it is still the current producer, so that the next batch gets a new
   * one, and closes it without waiting (its unacknowledged records fail and are sent again). Safe
   * to call from a producer callback.
   */
  void discard(Producer<String, byte[]> broken, String reason) {
    synchronized (lock) {
      if (producer != broken) {
        return;
      }
      producer = null;
    }
    log.warn("Kafka producer of pipeline {} is replaced after a fatal error: {}", pipeline, reason);
    Thread closer =
        PipelineThreads.daemon(
            pipeline,
            "outbox-relay-kafka-" + pipeline + "-discard",
            () -> closeQuietly(broken, Duration.ZERO));
    closer.start();
  }

  /**
   * Closes {@code refusing} at once, from its own I/O thread (a record callback), after it gave up
   * a record (the broker refused it, or it expired): no record it still holds is sent any more, and
   * the next batch gets a new producer.
   *
   * <p>Why: the idempotent producer writes a partition's batches in sequence order, so a later
   * batch can only be taken after every earlier one was. But once a batch fails for good, the
   * producer renumbers the partition's later batches (or starts a new epoch after an expiry) and
   * sends them again: a later event of the refused one's key would reach the topic first. Closed
   * inside the failed batch's callback, on the I/O thread, the producer sends nothing more: the
   * later batches fail ("closed forcefully") and are sent again after the refused one, by the
   * pipeline. Only a transaction (exactly-once mode) can do without this.
   *
   * @return whether this call stopped it (false: it was stopped before)
   */
  boolean stop(Producer<String, byte[]> refusing, String reason) {
    synchronized (lock) {
      if (stopped.putIfAbsent(refusing, reason) != null) {
        return false;
      }
      if (producer == refusing) {
        producer = null;
      }
    }
    log.warn(
        "Kafka producer of pipeline {} is closed and replaced so that no later record of the"
            + " partition overtakes a record it gave up ({}); what it still held goes again",
        pipeline,
        reason);
    // On the I/O thread close(ZERO) does not wait for that thread: it ends after this callback.
    closeQuietly(refusing, Duration.ZERO);
    return true;
  }

  /** Why {@code p} was {@linkplain #stop stopped}, or {@code null} if it was not. */
  String stoppedFor(Producer<String, byte[]> p) {
    synchronized (lock) {
      return stopped.get(p);
    }
  }

  /**
   * A sink's probe: whether the cluster answers within the smaller of {@code timeout} and {@code
   * probeTimeout}; an answer is logged as the end of an outage.
   */
  boolean probe(
      Duration timeout, Duration probeTimeout, io.outbox.relay.spi.support.SinkHealthLog health) {
    boolean ok = clusterAnswers(timeout.compareTo(probeTimeout) < 0 ? timeout : probeTimeout);
    if (ok) {
      health.probeAnswered();
    }
    return ok;
  }

  /**
   * Whether the cluster answers a describe-cluster request within {@code timeout}; never throws.
   */
  boolean clusterAnswers(Duration timeout) {
    long ms = Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try {
      producer(); // a producer that cannot be built is as bad as a cluster that does not answer
      Collection<Node> nodes =
          admin()
              .describeCluster(new DescribeClusterOptions().timeoutMs((int) ms))
              .nodes()
              .get(ms, TimeUnit.MILLISECONDS);
      return !nodes.isEmpty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      log.debug("Kafka probe of pipeline {} failed: {}", pipeline, FailureClassifier.describe(e));
      discardAdmin();
      return false;
    }
  }

  /**
   * Drops the admin client after a failed probe, so that the next probe starts from fresh
   * connections. The admin client never times out a connection whose first request went unanswered
   * (a broker cut off without a reset, then reachable again) as long as each probe's own timeout
   * ends first: it would probe that dead connection for good.
   */
  private void discardAdmin() {
    Admin stale;
    synchronized (lock) {
      stale = admin;
      admin = null;
    }
    if (stale != null) {
      try {
        stale.close(Duration.ZERO);
      } catch (RuntimeException e) {
        log.debug(
            "Closing the Kafka admin client of pipeline {} failed: {}", pipeline, e.toString());
      }
    }
  }

  @Override
  public CompletableFuture<Boolean> topicExists(String topic, Duration timeout) {
    // A metadata request that never creates the topic, whatever the broker's auto-creation.
    return admin()
        .describeTopics(
            List.of(topic), new DescribeTopicsOptions().timeoutMs(KafkaTimeouts.ms(timeout)))
        .allTopicNames()
        .toCompletionStage()
        .toCompletableFuture()
        .handle(
            (names, e) -> {
              if (e == null) {
                return true;
              }
              Throwable cause =
                  e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
              if (cause instanceof UnknownTopicOrPartitionException) {
                return false;
              }
              throw new CompletionException(cause);
            });
  }

  @Override
  public CompletableFuture<Boolean> autoCreatesTopics(Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    Admin a = admin();
    return a.describeCluster(new DescribeClusterOptions().timeoutMs(KafkaTimeouts.ms(timeout)))
        .nodes()
        .toCompletionStage()
        .toCompletableFuture()
        .thenCompose(
            nodes -> {
              if (nodes.isEmpty()) {
                throw new CompletionException(
                    new IllegalStateException("the cluster named no broker"));
              }
              // A static broker setting, the same on every broker of a sanely run cluster.
              ConfigResource broker =
                  new ConfigResource(
                      ConfigResource.Type.BROKER, String.valueOf(nodes.iterator().next().id()));
              return a.describeConfigs(
                      List.of(broker),
                      new DescribeConfigsOptions().timeoutMs(KafkaTimeouts.ms(deadline.left())))
                  .all()
                  .toCompletionStage()
                  .thenApply(
                      configs -> {
                        ConfigEntry entry = configs.get(broker).get(AUTO_CREATE_TOPICS);
                        if (entry == null || entry.value() == null) {
                          throw new CompletionException(
                              new IllegalStateException(
                                  "broker "
                                      + broker.name()
                                      + " did not show "
                                      + AUTO_CREATE_TOPICS));
                        }
                        return Boolean.parseBoolean(entry.value().strip());
                      });
            });
  }

  Admin admin() {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("the Kafka sink of pipeline " + pipeline + " is closed");
      }
      if (admin == null) {
        admin = factory.admin(adminConfig);
      }
      return admin;
    }
  }

  /** Closes the producer (waiting up to {@code timeout} for acknowledgements) and the admin. */
  void close(Duration timeout) {
    Producer<String, byte[]> p;
    Admin a;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      p = producer;
      a = admin;
      producer = null;
      admin = null;
    }
    Deadline deadline = ticker.deadline(timeout);
    if (p != null) {
      closeQuietly(p, timeout);
    }
    if (a != null) {
      try {
        a.close(deadline.left());
      } catch (RuntimeException e) {
        log.warn(
            "Closing the Kafka admin client of pipeline {} failed: {}",
            pipeline,
            FailureClassifier.describe(e));
      }
    }
  }

  private void closeQuietly(Producer<String, byte[]> p, Duration timeout) {
    try {
      p.close(timeout);
    } catch (RuntimeException e) {
      log.warn(
          "Closing the Kafka producer of pipeline {} failed: {}",
          pipeline,
          FailureClassifier.describe(e));
    }
  }
}
