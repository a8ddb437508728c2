package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SessionPoolingCheckTest {

  @Test
  void oneServerProcessPerClientIsASessionOfItsOwn() {
    assertThat(SessionPoolingCheck.verdict(pids(10), pids(11))).isEmpty();
  }

  @Test
  void aClientWhoseServerProcessChangedIsRefusedNamingThePids() {
    assertThat(SessionPoolingCheck.verdict(pids(10, 12), pids(11)))
        .hasValueSatisfying(
            line ->
                assertThat(line)
                    .contains("one client session ran in server processes [10, 12]")
                    .contains("pool_mode = session")
                    .doesNotContain("\n"));
    assertThat(SessionPoolingCheck.verdict(pids(10), pids(11, 10)))
        .hasValueSatisfying(
            line ->
                assertThat(line).contains("one client session ran in server processes [11, 10]"));
  }

  @Test
  void twoClientsInOneServerProcessAreRefused() {
    assertThat(SessionPoolingCheck.verdict(pids(10), pids(10)))
        .hasValueSatisfying(
            line ->
                assertThat(line)
                    .contains("two client sessions ran in the same server process 10")
                    .contains("PgBouncer with pool_mode = transaction or statement"));
  }

  private static Set<Integer> pids(Integer... pids) {
    return new LinkedHashSet<>(List.of(pids));
  }
}
