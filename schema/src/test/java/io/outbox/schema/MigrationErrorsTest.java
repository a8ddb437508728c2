package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.Test;

class MigrationErrorsTest {

  @Test
  void keepsFlywaysHeadlineAndTheDatabaseErrorOnOneLine() {
    SQLException sql =
        new SQLException("ERROR: column \"published_at\" does not exist\n  Position: 52", "42703");
    FlywayException flyway =
        new FlywayException(
            "Migration V1__outbox_tables.sql failed\n-----------\nSQL State  : 42703\nLine : 3",
            sql);

    assertThat(MigrationErrors.describe(flyway))
        .isEqualTo(
            "Migration V1__outbox_tables.sql failed: ERROR: column \"published_at\" does not"
                + " exist; Position: 52 [SQL state 42703]");
  }

  @Test
  void foldsAMessageWithoutSqlErrorIntoOneLine() {
    FlywayException flyway =
        new FlywayException("Validate failed\n--------\nchecksum mismatch for version 1\n");

    assertThat(MigrationErrors.describe(flyway))
        .isEqualTo("Validate failed; checksum mismatch for version 1");
  }

  @Test
  void hidesPasswords() {
    assertThat(MigrationErrors.redact("jdbc:postgresql://h/db?user=a&password=s3cret&x=1"))
        .isEqualTo("jdbc:postgresql://h/db?user=a&password=******&x=1");
    assertThat(MigrationErrors.redact("jdbc:postgresql://h/db?PASSWORD=s3cret"))
        .isEqualTo("jdbc:postgresql://h/db?PASSWORD=******");
  }
}
