package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.support.SettingsReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The session loop of the listener and the wake gate, without a server: a URL no driver takes makes
 * every open fail at once.
 */
class SessionKeeperTest {

  private static final String THREAD = "outbox-relay-p-session-keeper-test";

  @Test
  void aSessionThatCannotOpenIsRetriedWithDoublingBackoffAndCloseEndsTheThread() {
    List<Long> retries = new CopyOnWriteArrayList<>();
    List<String> messages = new CopyOnWriteArrayList<>();
    AtomicInteger lost = new AtomicInteger();
    AtomicInteger worked = new AtomicInteger();
    SessionKeeper keeper =
        new SessionKeeper(
            connections(),
            "test",
            "it",
            THREAD,
            new SessionKeeper.Session() {
              @Override
              public void work(Connection connection, Runnable established) {
                worked.incrementAndGet();
              }

              @Override
              public void lost() {
                lost.incrementAndGet();
              }

              @Override
              public void failed(SQLException e, long retryMs) {
                messages.add(e.getMessage());
                retries.add(retryMs);
              }
            });
    keeper.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> retries.size() >= 2);
    keeper.close(Duration.ofSeconds(5));

    assertThat(keeper.stopping()).isTrue();
    assertThat(retries).startsWith(500L, 1000L);
    assertThat(messages).allMatch(m -> m.startsWith("not a PostgreSQL JDBC URL"));
    assertThat(lost.get()).isGreaterThanOrEqualTo(2);
    assertThat(worked.get()).isZero();
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().equals(THREAD) && t.isAlive());
  }

  private static Connections connections() {
    PollingSettings settings =
        SettingsReader.settings(
            PollingFixture.context(PollingFixture.settings(Map.of()), 1, new ArrayList<>()),
            PollingSettings::read,
            "polling source");
    DatabaseSettings database =
        new DatabaseSettings(
            "jdbc:none://nowhere/app",
            "app",
            null,
            Map.of(),
            "outbox",
            "outbox_dead_letter",
            DatabaseSettings.OnPublish.MARK,
            "p");
    return new Connections(database, settings, "p");
  }
}
