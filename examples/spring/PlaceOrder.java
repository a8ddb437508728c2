import javax.sql.DataSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * Writes an order and its OrderPlaced event in one transaction with Spring: a {@code JdbcTemplate}
 * in a {@code @Transactional} method (spring-context and spring-jdbc, and the PostgreSQL driver, on
 * the class path). Connects with the libpq environment variables (PGHOST, PGPORT, PGDATABASE,
 * PGUSER, PGPASSWORD). In a Spring Boot application, {@link OrderService} is all you need.
 *
 * <pre>java -cp spring-and-postgresql-jars PlaceOrder.java ORDER_ID</pre>
 */
public class PlaceOrder {

  /** What the rest of the application calls. */
  public interface Orders {
    void place(String orderId);
  }

  /** Both inserts commit together, or neither does. */
  public static class OrderService implements Orders {
    private final JdbcTemplate jdbc;

    public OrderService(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Override
    @Transactional
    public void place(String orderId) {
      jdbc.update("INSERT INTO orders (id, total) VALUES (?, 42.5)", orderId);
      jdbc.update(
          "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
              + " VALUES ('order', ?, 'OrderPlaced', ?::jsonb)",
          orderId,
          "{\"orderId\": \"" + orderId + "\", \"total\": 42.5}");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement
  public static class Config {
    @Bean
    public DataSource dataSource() {
      return new DriverManagerDataSource(
          "jdbc:postgresql://"
              + env("PGHOST", "localhost")
              + ":"
              + env("PGPORT", "5432")
              + "/"
              + env("PGDATABASE", "postgres"),
          env("PGUSER", "postgres"),
          env("PGPASSWORD", ""));
    }

    @Bean
    public PlatformTransactionManager transactionManager(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    public Orders orders(DataSource dataSource) {
      return new OrderService(new JdbcTemplate(dataSource));
    }
  }

  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: java PlaceOrder.java ORDER_ID");
      System.exit(2);
    }
    try (AnnotationConfigApplicationContext context =
        new AnnotationConfigApplicationContext(Config.class)) {
      context.getBean(Orders.class).place(args[0]);
    }
  }

  static String env(String name, String otherwise) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? otherwise : value;
  }
}
