package io.outbox.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway certificate authority and one server certificate it signed, made with BouncyCastle at
 * test time, for private TLS endpoints (PostgreSQL, Kafka, RabbitMQ) of a test's own.
 *
 * @param dir where the files are
 * @param caCertificate the CA's certificate (PEM), what clients trust
 * @param serverCertificate the server's certificate (PEM), signed by the CA, valid for {@code
 *     subjectAltNames}
 * @param serverKey the server's unencrypted private key (PEM, PKCS#8)
 * @param serverKeyStore the server's key and certificate chain as PKCS12, protected by {@code
 *     password}
 * @param trustStore a PKCS12 trust store holding only the CA's certificate, protected by {@code
 *     password}
 * @param password the password of both PKCS12 stores
 */
public record TestCertificates(
    Path dir,
    Path caCertificate,
    Path serverCertificate,
    Path serverKey,
    Path serverKeyStore,
    Path trustStore,
    String password) {

  /** The subject alternative names of a server certificate valid for the loopback address. */
  public static final String LOOPBACK = "IP:127.0.0.1,DNS:localhost";

  private static final Duration VALIDITY = Duration.ofDays(2);
  private static final String SIGNATURE = "SHA256withRSA";
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * Creates a CA named {@code name} and a server certificate (CN {@code localhost}) with the given
   * subject alternative names, e.g. {@link #LOOPBACK} ({@code IP:} and {@code DNS:} entries,
   * comma-separated), in {@code dir} (created if needed).
   *
   * @throws IllegalArgumentException when a subject alternative name is neither {@code IP:} nor
   *     {@code DNS:}
   */
  public static TestCertificates create(Path dir, String name, String subjectAltNames) {
    try {
      Files.createDirectories(dir);
      Path ca = dir.resolve("ca.pem");
      Path key = dir.resolve("server.key");
      Path cert = dir.resolve("server.pem");
      Path keyStore = dir.resolve("server.p12");
      Path trustStore = dir.resolve("trust.p12");
      String password = "test-store-pw";
      Instant now = Instant.now();
      KeyPair caKeys = rsa();
      X500Name caName = new X500Name("CN=" + name + " test CA");
      X509Certificate caCert =
          sign(
              new JcaX509v3CertificateBuilder(
                      caName, serial(), from(now), until(now), caName, caKeys.getPublic())
                  .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                  .addExtension(
                      Extension.keyUsage,
                      true,
                      new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)),
              caKeys.getPrivate());
      KeyPair serverKeys = rsa();
      X509Certificate serverCert =
          sign(
              new JcaX509v3CertificateBuilder(
                      caName,
                      serial(),
                      from(now),
                      until(now),
                      new X500Name("CN=localhost"),
                      serverKeys.getPublic())
                  .addExtension(Extension.subjectAlternativeName, false, names(subjectAltNames))
                  .addExtension(
                      Extension.extendedKeyUsage,
                      false,
                      new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth)),
              caKeys.getPrivate());
      pem(ca, "CERTIFICATE", caCert.getEncoded());
      pem(cert, "CERTIFICATE", serverCert.getEncoded());
      pem(key, "PRIVATE KEY", serverKeys.getPrivate().getEncoded()); // PKCS#8
      KeyStore server = KeyStore.getInstance("PKCS12");
      server.load(null, null);
      server.setKeyEntry(
          "server",
          serverKeys.getPrivate(),
          password.toCharArray(),
          new Certificate[] {serverCert, caCert});
      store(server, keyStore, password);
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", caCert);
      store(trust, trustStore, password);
      return new TestCertificates(dir, ca, cert, key, keyStore, trustStore, password);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write test certificates into " + dir, e);
    } catch (GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make test certificates: " + e, e);
    }
  }

  private static KeyPair rsa() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048, RANDOM);
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(64, RANDOM).add(BigInteger.ONE);
  }

  /** An hour back: a clock a little behind the machine's still takes the certificate. */
  private static Date from(Instant now) {
    return Date.from(now.minus(Duration.ofHours(1)));
  }

  private static Date until(Instant now) {
    return Date.from(now.plus(VALIDITY));
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer)));
  }

  /** {@code IP:127.0.0.1,DNS:localhost} as general names. */
  static GeneralNames names(String subjectAltNames) throws CertIOException {
    List<GeneralName> names = new ArrayList<>();
    for (String entry : subjectAltNames.split(",")) {
      String e = entry.trim();
      if (e.startsWith("IP:")) {
        names.add(new GeneralName(GeneralName.iPAddress, e.substring(3)));
      } else if (e.startsWith("DNS:")) {
        names.add(new GeneralName(GeneralName.dNSName, e.substring(4)));
      } else {
        throw new IllegalArgumentException(
            "a subject alternative name is IP:<address> or DNS:<name>: " + e);
      }
    }
    return new GeneralNames(names.toArray(GeneralName[]::new));
  }

  private static void pem(Path file, String type, byte[] der) throws IOException {
    String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
    Files.writeString(
        file,
        "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n",
        StandardCharsets.US_ASCII);
  }

  private static void store(KeyStore store, Path file, String password)
      throws IOException, GeneralSecurityException {
    try (OutputStream out = Files.newOutputStream(file)) {
      store.store(out, password.toCharArray());
    }
  }
}
