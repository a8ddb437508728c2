package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class DistributionMainTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return DistributionMain.execute(new PrintWriter(out), new PrintWriter(err), args);
  }

  @Test
  void listsTheProductionCommandsOnly() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString())
        .containsPattern("(?m)^\\s+run\\b")
        .containsPattern("(?m)^\\s+migrate\\b")
        .containsPattern("(?m)^\\s+check-config\\b")
        .containsPattern("(?m)^\\s+status\\b")
        .containsPattern("(?m)^\\s+dead-letters\\b")
        .doesNotContainPattern("(?m)^\\s+demo\\b")
        .doesNotContainPattern("(?m)^\\s+bench\\b");
  }

  @Test
  void checkoutCommandsAreUnknownCommands() {
    assertThat(run("demo")).isEqualTo(2);
    assertThat(err.toString()).contains("unknown command 'demo'");
    assertThat(run("bench")).isEqualTo(2);
    assertThat(err.toString()).contains("unknown command 'bench'");
  }

  @Test
  void keepsTheDaemonsSubcommands() {
    assertThat(run("check-config", "--help")).isZero();
    assertThat(out.toString()).contains("--config");
  }
}
