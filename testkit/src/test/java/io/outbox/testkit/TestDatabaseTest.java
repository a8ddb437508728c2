package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TestDatabaseTest {
  private static final String IDENTIFIER = "[a-z_][a-z0-9_]*";

  @Test
  void uniqueNameIsALowerCaseIdentifierStartingWithThePrefix() {
    String name = TestDatabase.uniqueName("PollingSource-IT");

    assertThat(name).matches(IDENTIFIER).matches("pollingsource_it_[0-9a-f]{10}");
  }

  @Test
  void uniqueNameDiffersBetweenCalls() {
    assertThat(TestDatabase.uniqueName("x")).isNotEqualTo(TestDatabase.uniqueName("x"));
  }

  @Test
  void uniqueNameGetsALetterBeforeALeadingDigitOrAnEmptyPrefix() {
    assertThat(TestDatabase.uniqueName("42abc")).matches(IDENTIFIER).startsWith("t_42abc_");
    assertThat(TestDatabase.uniqueName("")).matches(IDENTIFIER).startsWith("t__");
  }

  @Test
  void uniqueNameFitsPostgresIdentifierLimit() {
    String name = TestDatabase.uniqueName("a".repeat(100));

    assertThat(name).hasSize(63).matches(IDENTIFIER);
  }
}
