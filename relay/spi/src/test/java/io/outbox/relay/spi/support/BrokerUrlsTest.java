package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

class BrokerUrlsTest {

  @Test
  void splitsAtCommasAndDropsBlanks() {
    assertThat(BrokerUrls.split(" nats://a:4222, ,nats://b:4222 "))
        .containsExactly("nats://a:4222", "nats://b:4222");
  }

  @Test
  void masksThePasswordButKeepsTheUser() {
    assertThat(BrokerUrls.mask("amqps://relay:s3cret@rabbit:5671/prod", false))
        .isEqualTo("amqps://relay:****@rabbit:5671/prod");
    assertThat(BrokerUrls.mask("amqp://relay@rabbit/%2f", false))
        .isEqualTo("amqp://relay:****@rabbit/%2f");
    assertThat(BrokerUrls.mask("amqp://rabbit/a@b", false)).isEqualTo("amqp://rabbit/a@b");
    assertThat(BrokerUrls.mask("host:4222", false)).isEqualTo("host:4222");
  }

  @Test
  void bareUserInfoThatIsASecretIsHiddenWhole() {
    assertThat(BrokerUrls.mask("nats://t0ken@host:4222", true)).isEqualTo("nats://:****@host:4222");
    assertThat(BrokerUrls.mask("nats://u:pw@host:4222", true)).isEqualTo("nats://u:****@host:4222");
  }

  @Test
  void namesTheAcceptedSchemesAndAMissingHost() {
    List<String> schemes = List.of("nats", "tls", "ws");
    assertThat(BrokerUrls.schemeOrHostProblem(URI.create("http://h"), schemes, "nats://h:1", "X"))
        .isEqualTo("must start with nats://, tls:// or ws://, got X");
    assertThat(
            BrokerUrls.schemeOrHostProblem(
                URI.create("redis://h"), List.of("rediss"), "rediss://h:1", "X"))
        .isEqualTo("must start with rediss://, got X");
    assertThat(BrokerUrls.schemeOrHostProblem(URI.create("NATS:///x"), schemes, "nats://h:1", "X"))
        .isEqualTo("must name a host (nats://h:1), got X");
    assertThat(BrokerUrls.schemeOrHostProblem(URI.create("tls://h:1"), schemes, "e", "X")).isNull();
  }

  @Test
  void userAndPasswordComeFromTheUserInfo() {
    URI both = URI.create("rediss://relay:s3:cret@cache:6380/2");
    assertThat(BrokerUrls.user(both)).isEqualTo("relay");
    assertThat(BrokerUrls.password(both)).isEqualTo("s3:cret"); // after the first colon only
    URI passwordOnly = URI.create("redis://:pw@cache");
    assertThat(BrokerUrls.user(passwordOnly)).isNull();
    assertThat(BrokerUrls.password(passwordOnly)).isEqualTo("pw");
    URI userOnly = URI.create("amqp://relay@rabbit");
    assertThat(BrokerUrls.user(userOnly)).isEqualTo("relay");
    assertThat(BrokerUrls.password(userOnly)).isNull();
    URI none = URI.create("redis://cache:6379");
    assertThat(BrokerUrls.user(none)).isNull();
    assertThat(BrokerUrls.password(none)).isNull();
  }
}
