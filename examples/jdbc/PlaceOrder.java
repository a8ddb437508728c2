import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Writes an order and its OrderPlaced event in one transaction with plain JDBC (the PostgreSQL
 * driver, org.postgresql:postgresql, on the class path). Connects with the libpq environment
 * variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD).
 *
 * <pre>java -cp postgresql.jar PlaceOrder.java ORDER_ID</pre>
 */
public class PlaceOrder {

  static void placeOrder(Connection connection, String orderId) throws SQLException {
    connection.setAutoCommit(false);
    try (PreparedStatement order =
            connection.prepareStatement("INSERT INTO orders (id, total) VALUES (?, ?)");
        PreparedStatement event =
            connection.prepareStatement(
                "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
                    + " VALUES ('order', ?, 'OrderPlaced', ?::jsonb)")) {
      order.setString(1, orderId);
      order.setBigDecimal(2, new java.math.BigDecimal("42.5"));
      order.executeUpdate();
      event.setString(1, orderId);
      event.setString(2, "{\"orderId\": \"" + orderId + "\", \"total\": 42.5}");
      event.executeUpdate();
      connection.commit();
    } catch (SQLException | RuntimeException e) {
      connection.rollback();
      throw e;
    }
  }

  public static void main(String[] args) throws SQLException {
    if (args.length != 1) {
      System.err.println("usage: java PlaceOrder.java ORDER_ID");
      System.exit(2);
    }
    try (Connection connection =
        DriverManager.getConnection(url(), env("PGUSER", "postgres"), env("PGPASSWORD", ""))) {
      placeOrder(connection, args[0]);
    }
  }

  static String url() {
    return "jdbc:postgresql://"
        + env("PGHOST", "localhost")
        + ":"
        + env("PGPORT", "5432")
        + "/"
        + env("PGDATABASE", "postgres");
  }

  static String env(String name, String otherwise) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? otherwise : value;
  }
}
