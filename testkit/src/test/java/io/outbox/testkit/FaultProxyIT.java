package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.testkit.FaultProxy.Mode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * A black hole in front of the real PostgreSQL: a query hangs until the driver's socket timeout.
 */
class FaultProxyIT {

  @Test
  void blackholeMakesAQueryWaitForTheSocketTimeoutThenPassHealsNewConnections() throws Exception {
    try (FaultProxy proxy = FaultProxy.start(Services.pgHost(), Services.pgPort())) {
      String url = "jdbc:postgresql://" + proxy.address() + "/postgres";
      Properties properties = new Properties();
      properties.setProperty("user", Services.pgUser());
      properties.setProperty("password", Services.pgPassword());
      properties.setProperty("socketTimeout", "2");
      try (Connection connection = DriverManager.getConnection(url, properties)) {
        assertThat(selectOne(connection)).isEqualTo(1);

        proxy.set(Mode.BLACKHOLE);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> selectOne(connection))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("An I/O error occurred");
        Duration waited = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(waited).isBetween(Duration.ofMillis(1_900), Duration.ofSeconds(10));
        assertThat(connection.isClosed()).as("the driver gives the session up").isTrue();
      }
      proxy.set(Mode.PASS);
      try (Connection again = DriverManager.getConnection(url, properties)) {
        assertThat(selectOne(again)).isEqualTo(1);
      }
    }
  }

  private static int selectOne(Connection connection) throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT 1")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
