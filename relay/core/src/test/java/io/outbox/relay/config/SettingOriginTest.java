package io.outbox.relay.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigOriginFactory;
import java.net.URL;
import org.junit.jupiter.api.Test;

/** Where a setting came from; defaults (class path resources) in EffectiveSettingsPrinterTest. */
class SettingOriginTest {

  @Test
  void namesTheModuleOfAReferenceConfByItsJarWithoutVersion() throws Exception {
    assertThat(
            SettingOrigin.module(
                new URL(
                    "jar:file:/opt/outbox-relay/lib/outbox-relay-core-0.1.0-SNAPSHOT.jar!/reference.conf")))
        .isEqualTo("outbox-relay-core");
    assertThat(
            SettingOrigin.module(
                new URL("jar:file:/opt/lib/outbox-relay-sink-kafka-1.2.0.jar!/reference.conf")))
        .isEqualTo("outbox-relay-sink-kafka");
    assertThat(SettingOrigin.module(new URL("jar:file:/opt/lib/plugin.jar!/reference.conf")))
        .isEqualTo("plugin");
    assertThat(SettingOrigin.module(new URL("file:/src/relay/core/target/classes/reference.conf")))
        .isEqualTo("/src/relay/core/target/classes");
  }

  @Test
  void describesFilesAndVariables() {
    assertThat(
            SettingOrigin.describe(
                ConfigOriginFactory.newFile("/etc/relay.conf").withLineNumber(12)))
        .isEqualTo("/etc/relay.conf:12");
    assertThat(
            SettingOrigin.describe(
                ConfigOriginFactory.newSimple("environment variable CONFIG_FORCE_a_b")))
        .isEqualTo("env CONFIG_FORCE_a_b");
    assertThat(SettingOrigin.describe(null)).isEqualTo("unknown");
  }
}
