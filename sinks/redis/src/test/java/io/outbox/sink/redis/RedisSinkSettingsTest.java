package io.outbox.sink.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.SecretKeyAnswers;
import io.outbox.testkit.SinkContexts;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisDataException;

class RedisSinkSettingsTest {

  private static final String PATH = SinkContexts.path("redis");

  private static List<String> problems(String hocon) {
    return SettingsReader.problems(SinkContexts.context("redis", hocon), RedisSinkSettings::read)
        .stream()
        .map(p -> p.path() + ": " + p.message())
        .toList();
  }

  private static RedisSinkSettings settings(String hocon) {
    return SettingsReader.settings(
        SinkContexts.context("redis", hocon), RedisSinkSettings::read, "redis sink");
  }

  @Test
  void theDefaultsAreValid() {
    assertThat(problems("")).isEmpty();
    RedisSinkSettings s = settings("");
    assertThat(s.address()).isEqualTo("127.0.0.1:6379");
    assertThat(s.dedupWindow()).isEqualTo(Duration.ofHours(1));
    assertThat(s.maxLen()).isZero();
    assertThat(s.connections()).isEqualTo(4);
    assertThat(s.waitReplicas()).isZero();
    assertThat(s.waitTimeout()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void waitTimeoutMustBeShorterThanTheBatchTimeout() {
    assertThat(problems("wait-replicas = 1, wait-timeout = 10s, timeout = 10s"))
        .containsExactly(
            PATH
                + ".wait-timeout: must be shorter than timeout (10000 ms): a batch's WAIT would"
                + " outlast the batch, not \"10s\"");
    assertThat(problems("wait-replicas = 65"))
        .singleElement()
        .asString()
        .contains("in [0, 64], not 65");
    assertThat(problems("wait-replicas = 2, wait-timeout = 200ms")).isEmpty();
  }

  @Test
  void everyBadValueIsReportedAtOnceWithItsKeyPath() {
    assertThat(
            problems(
                """
                uri = "http://secret@host:6379/x"
                timeout = 0s
                max-len = -1
                dedup-window = soon
                dedup-key-prefix = ""
                connections = 0
                """))
        .containsExactlyInAnyOrder(
            PATH + ".uri: must start with redis:// or rediss://, got \"http://...@host:6379/x\"",
            PATH + ".timeout: must be a positive duration, not \"0s\"",
            PATH + ".max-len: must be >= 0, not -1",
            PATH + ".dedup-window: \"soon\" is not a duration such as 500ms, 30s or 5m",
            PATH + ".dedup-key-prefix: must not be empty (the markers would mix with other keys)",
            PATH + ".connections: must be in [1, 256], not 0");
    assertThat(problems("uri = \"redis://:pw@host:6379/db\""))
        .singleElement()
        .asString()
        .contains("database number")
        .doesNotContain("pw");
  }

  @Test
  void theUriGivesUserPasswordAndDatabaseAndIsShownWithoutThePassword() {
    RedisSinkSettings s = settings("uri = \"rediss://relay:s3cret@cache:6380/2\"");
    assertThat(s.user()).isEqualTo("relay");
    assertThat(s.effectivePassword()).isEqualTo("s3cret");
    assertThat(s.database()).isEqualTo(2);
    assertThat(s.tls()).isTrue();
    assertThat(s.maskedUri()).isEqualTo("rediss://relay:****@cache:6380/2");
    assertThat(s.toString()).doesNotContain("s3cret");
    RedisSinkSettings overridden = settings("uri = \"redis://:old@cache\", password = fresh");
    assertThat(overridden.user()).isNull();
    assertThat(overridden.effectivePassword()).isEqualTo("fresh");
    assertThat(overridden.toString()).doesNotContain("old", "fresh");
  }

  @Test
  void onlyThePasswordIsASecretKey() {
    SecretKeyAnswers.of(new RedisSinkProvider().secretKeys())
        .secret("password")
        .notSecret("uri", "dedup-key-prefix");
  }

  @Test
  void replyErrorsAreClassifiedByTheirCode() {
    assertThat(classify("WRONGTYPE Operation against a key holding the wrong kind of value"))
        .isEqualTo(io.outbox.relay.spi.Verdict.Outcome.PERMANENT);
    assertThat(classify("ERR Error running script: @user_script:7: WRONGTYPE Operation ..."))
        .isEqualTo(io.outbox.relay.spi.Verdict.Outcome.PERMANENT);
    assertThat(classify("OOM command not allowed when used memory > 'maxmemory'."))
        .isEqualTo(io.outbox.relay.spi.Verdict.Outcome.SINK_UNAVAILABLE);
    assertThat(classify("LOADING Redis is loading the dataset in memory"))
        .isEqualTo(io.outbox.relay.spi.Verdict.Outcome.SINK_UNAVAILABLE);
    assertThat(classify("ERR something else"))
        .isEqualTo(io.outbox.relay.spi.Verdict.Outcome.RETRYABLE);
  }

  private static io.outbox.relay.spi.Verdict.Outcome classify(String message) {
    return ReplyErrors.classify(new JedisDataException(message), "s").outcome();
  }
}
