package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicNamesTest {

  @Test
  void acceptsKafkaTopicNames() {
    assertThat(TopicNames.problem("outbox.order")).isNull();
    assertThat(TopicNames.problem("A-z_0.9")).isNull();
    assertThat(TopicNames.problem("x".repeat(249))).isNull();
    assertThat(TopicNames.problem("...")).isNull();
  }

  @Test
  void rejectsIllegalCharactersNamingTheTopicAndTheCharacter() {
    assertThat(TopicNames.problem("outbox/order"))
        .isEqualTo(
            "invalid topic name 'outbox/order': character '/' at position 6 is not allowed"
                + " (only a-z, A-Z, 0-9, '.', '_' and '-')");
    assertThat(TopicNames.problem("a b")).contains("U+0020");
    assertThat(TopicNames.problem("bad\ntopic")).contains("'bad?topic'").doesNotContain("\n");
    assertThat(TopicNames.problem("ordré")).contains("'é'");
  }

  @Test
  void rejectsEmptyDotsAndTooLongNames() {
    assertThat(TopicNames.problem("")).contains("empty");
    assertThat(TopicNames.problem(".")).contains("'.' and '..'");
    assertThat(TopicNames.problem("..")).contains("'.' and '..'");
    assertThat(TopicNames.problem("x".repeat(250))).contains("250 characters, at most 249");
  }
}
