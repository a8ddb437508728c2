package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestCertificatesTest {

  @Test
  void aCaAndAServerCertificateItSignedForTheLoopback(@TempDir Path dir) throws Exception {
    TestCertificates c = TestCertificates.create(dir, "unit", TestCertificates.LOOPBACK);

    X509Certificate ca = read(c.caCertificate());
    X509Certificate server = read(c.serverCertificate());
    assertThat(ca.getSubjectX500Principal().getName()).isEqualTo("CN=unit test CA");
    assertThat(ca.getBasicConstraints()).as("a CA").isGreaterThanOrEqualTo(0);
    server.verify(ca.getPublicKey()); // signed by the CA
    server.checkValidity();
    assertThat(server.getSubjectX500Principal().getName()).isEqualTo("CN=localhost");
    assertThat(server.getBasicConstraints()).as("not a CA").isEqualTo(-1);
    assertThat(server.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1"); // serverAuth
    assertThat(server.getSubjectAlternativeNames())
        .containsExactlyInAnyOrder(List.of(7, "127.0.0.1"), List.of(2, "localhost"));

    // The PEM key is the certificate's: what it signs, the certificate's key verifies.
    String pem = Files.readString(c.serverKey());
    assertThat(pem).startsWith("-----BEGIN PRIVATE KEY-----\n");
    byte[] der =
        Base64.getMimeDecoder()
            .decode(pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").trim());
    var key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
    Signature s = Signature.getInstance("SHA256withRSA");
    s.initSign(key);
    s.update(new byte[] {1, 2, 3});
    byte[] signed = s.sign();
    s.initVerify(server.getPublicKey());
    s.update(new byte[] {1, 2, 3});
    assertThat(s.verify(signed)).isTrue();

    KeyStore keyStore = load(c.serverKeyStore(), c.password());
    assertThat(keyStore.getCertificateChain("server")).containsExactly(server, ca);
    assertThat(keyStore.getKey("server", c.password().toCharArray())).isEqualTo(key);
    KeyStore trust = load(c.trustStore(), c.password());
    assertThat(java.util.Collections.list(trust.aliases())).containsExactly("ca");
    assertThat(trust.getCertificate("ca")).isEqualTo(ca);
  }

  @Test
  void aSubjectAlternativeNameOfAnotherKindIsRefused(@TempDir Path dir) {
    assertThatThrownBy(() -> TestCertificates.create(dir, "unit", "URI:https://x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("URI:https://x");
  }

  private static X509Certificate read(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static KeyStore load(Path file, String password) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      store.load(in, password.toCharArray());
    }
    return store;
  }
}
