package io.outbox.sink.rabbitmq;

import static io.outbox.sink.rabbitmq.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.ConnectionFactory;
import io.outbox.relay.spi.support.SettingsReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RabbitConnectionTest {

  private static ConnectionFactory factory(String hocon) {
    return RabbitConnection.factory(
        SettingsReader.settings(context(hocon), RabbitSinkSettings::read, "rabbitmq sink"));
  }

  @Test
  void plainAmqpHasNoTlsNoAutomaticRecoveryAndBoundedWaits() {
    ConnectionFactory f =
        factory(
            """
            uri = "amqp://relay:pw@rabbit:5673/orders"
            connection-timeout = 3s
            heartbeat = 15s
            """);
    assertThat(f.isSSL()).isFalse();
    assertThat(f.getHost()).isEqualTo("rabbit");
    assertThat(f.getPort()).isEqualTo(5673);
    assertThat(f.getVirtualHost()).isEqualTo("orders");
    assertThat(f.getUsername()).isEqualTo("relay");
    assertThat(f.isAutomaticRecoveryEnabled()).isFalse();
    assertThat(f.isTopologyRecoveryEnabled()).isFalse();
    assertThat(f.getConnectionTimeout()).isEqualTo(3000);
    assertThat(f.getHandshakeTimeout()).isEqualTo(3000);
    assertThat(f.getChannelRpcTimeout()).isEqualTo(3000);
    assertThat(f.getRequestedHeartbeat()).isEqualTo(15);
  }

  @Test
  void passwordSettingReplacesTheUrisPasswordAndKeepsItsUser() {
    ConnectionFactory f = factory("uri = \"amqp://relay:old@rabbit/%2f\"\npassword = \"n3w\"");
    assertThat(f.getUsername()).isEqualTo("relay");
    assertThat(f.getPassword()).isEqualTo("n3w");
    assertThat(factory("uri = \"amqp://relay:old@rabbit/%2f\"").getPassword()).isEqualTo("old");
    assertThat(
            SettingsReader.settings(
                    context("password = \"n3w\""), RabbitSinkSettings::read, "rabbitmq sink")
                .toString())
        .doesNotContain("n3w");
  }

  @Test
  void amqpsUsesTlsOnPort5671ByDefault() {
    ConnectionFactory f = factory("uri = \"amqps://relay:pw@rabbit/%2f\"");
    assertThat(f.isSSL()).isTrue();
    assertThat(f.getPort()).isEqualTo(5671);
    assertThat(f.getVirtualHost()).isEqualTo("/");
    assertThat(factory("uri = \"amqps://relay:pw@rabbit:6000/%2f\"").getPort()).isEqualTo(6000);
  }

  @Test
  void amqpsReadsTheConfiguredTrustStore(@TempDir Path dir) throws Exception {
    Path store = dir.resolve("trust.p12");
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    try (OutputStream out = Files.newOutputStream(store)) {
      ks.store(out, "changeit".toCharArray());
    }
    ConnectionFactory f =
        factory(
            "uri = \"amqps://rabbit/%2f\"\ntrust-store = \""
                + store
                + "\"\ntrust-store-password = changeit");
    assertThat(f.isSSL()).isTrue();

    assertThatThrownBy(
            () ->
                factory(
                    "uri = \"amqps://u:secretpw@rabbit/%2f\"\ntrust-store = \""
                        + store
                        + "\"\ntrust-store-password = wrong-pw"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("amqps://u:****@rabbit/%2f")
        .hasMessageNotContaining("secretpw")
        .hasMessageNotContaining("wrong-pw");
  }
}
