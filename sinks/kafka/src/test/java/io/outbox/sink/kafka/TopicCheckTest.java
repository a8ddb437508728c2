package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Ticker;
import io.outbox.sink.kafka.TopicCheck.Answer;
import io.outbox.sink.kafka.TopicCheck.Kind;
import io.outbox.testkit.FakeTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

class TopicCheckTest {

  private final ScriptedBroker broker = new ScriptedBroker();
  private final FakeTime time = new FakeTime();
  private final TopicCheck check = new TopicCheck(broker, Duration.ofSeconds(2), time);

  private Answer answer(String topic) throws Exception {
    return check.answer(topic).get(5, TimeUnit.SECONDS);
  }

  @Test
  void aMissingTopicTheBrokerDoesNotCreateIsAbsent() throws Exception {
    assertThat(answer("gone").kind()).isEqualTo(Kind.ABSENT);
  }

  @Test
  void aMissingTopicTheBrokerCreatesIsNotAbsent() throws Exception {
    broker.autoCreates = true;
    assertThat(answer("new").kind()).isEqualTo(Kind.AUTO_CREATED);
  }

  @Test
  void anExistingTopicExistsWithoutAskingAboutAutoCreation() throws Exception {
    broker.existing.add("t");
    assertThat(answer("t").kind()).isEqualTo(Kind.EXISTS);
    assertThat(broker.autoCreateQuestions).hasValue(0);
  }

  @Test
  void aBrokerThatDoesNotAnswerGivesNoAnswer() throws Exception {
    broker.topicFailures.put("t", new TimeoutException("Timed out waiting for a node assignment"));
    Answer a = answer("t");
    assertThat(a.kind()).isEqualTo(Kind.NO_ANSWER);
    assertThat(a.detail()).contains("Timed out waiting for a node assignment");
  }

  @Test
  void waitingEndsAtTheBatchDeadlineWithNoAnswer() {
    broker.silent = true;
    long start = System.nanoTime();
    Answer a = check.await("t", Ticker.SYSTEM.deadline(Duration.ofMillis(200)));
    assertThat(a.kind()).isEqualTo(Kind.NO_ANSWER);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    assertThat(check.await("t", time.deadline(Duration.ZERO)).kind()).isEqualTo(Kind.NO_ANSWER);
  }

  @Test
  void aRefusedQuestionIsAmbiguous() throws Exception {
    broker.topicFailures.put("t", new TopicAuthorizationException("no Describe on t"));
    assertThat(answer("t").kind()).isEqualTo(Kind.AMBIGUOUS);
  }

  @Test
  void anUnknownAutoCreationSettingIsAmbiguousAndAskedAgain() throws Exception {
    broker.autoCreateFailure = new ClusterAuthorizationException("no DescribeConfigs");
    Answer a = answer("a");
    assertThat(a.kind()).isEqualTo(Kind.AMBIGUOUS);
    assertThat(a.detail())
        .contains("auto.create.topics.enable unknown")
        .contains("DescribeConfigs");
    broker.autoCreateFailure = null;
    assertThat(answer("b").kind()).isEqualTo(Kind.ABSENT);
    assertThat(broker.autoCreateQuestions).hasValue(2);
  }

  @Test
  void aBatchOfFiveHundredEventsToAMissingTopicAsksOnce() throws Exception {
    for (int i = 0; i < 500; i++) {
      assertThat(answer("gone").kind()).isEqualTo(Kind.ABSENT);
    }
    assertThat(broker.topicQuestions).hasValue(1);
    assertThat(broker.autoCreateQuestions).hasValue(1);
  }

  @Test
  void theAnswerForATopicExpiresSoThatACreatedTopicIsSeen() throws Exception {
    assertThat(answer("late").kind()).isEqualTo(Kind.ABSENT);
    broker.existing.add("late");
    time.advance(TopicCheck.TOPIC_TTL.minusMillis(1));
    assertThat(answer("late").kind()).isEqualTo(Kind.ABSENT);
    time.advance(Duration.ofMillis(1));
    assertThat(answer("late").kind()).isEqualTo(Kind.EXISTS);
    assertThat(broker.topicQuestions).hasValue(2);
  }

  @Test
  void theBrokersAutoCreationIsAskedOnceForManyTopics() throws Exception {
    for (int i = 0; i < 20; i++) {
      assertThat(answer("gone-" + i).kind()).isEqualTo(Kind.ABSENT);
    }
    assertThat(broker.topicQuestions).hasValue(20);
    assertThat(broker.autoCreateQuestions).hasValue(1);
  }
}
