package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The writers against the local PostgreSQL ({@code scripts/services.sh up}; OUTBOX_PG_* give its
 * address): without a warm-up the measured window starts with the writers' schedule, so the time
 * the start takes (the relay's figures read first, the writers' connections) must not come back as
 * a burst of late commits at the start of the window that the figures measure.
 */
class WritersIT {

  private static final int RATE = 500;

  @Test
  void withoutAWarmUpTheFirstCommitsKeepTheRateWhateverTheStartCost() throws Exception {
    String url =
        "jdbc:postgresql://"
            + System.getenv().getOrDefault("OUTBOX_PG_HOST", "127.0.0.1")
            + ":"
            + System.getenv().getOrDefault("OUTBOX_PG_PORT", "5432")
            + "/postgres";
    String name = "bench_writers_" + UUID.randomUUID().toString().substring(0, 8);
    try (BenchDatabase db =
        BenchDatabase.create(
            url,
            System.getenv().getOrDefault("OUTBOX_PG_USER", "postgres"),
            System.getenv().getOrDefault("OUTBOX_PG_PASSWORD", ""),
            name,
            null,
            false)) {
      Writers.Outcome o =
          Writers.run(
              db,
              new Workload(1000, 100, Workload.MIN_PAYLOAD_BYTES),
              4,
              RATE,
              Duration.ZERO,
              () -> Thread.sleep(400), // as a slow scrape of a young relay's /metrics
              Duration.ofSeconds(2));

      List<Long> commits =
          o.commits().values().stream().map(Writers.Commit::nanos).sorted().toList();
      long first = commits.get(0);
      long inFirst100ms = commits.stream().filter(t -> t - first < 100_000_000L).count();
      // 50 at the rate; a burst of the 400 ms the start took would be about 250.
      assertThat(inFirst100ms).isLessThan(100);
    }
  }
}
