package io.outbox.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority and one server certificate it signed, made with {@code openssl}
 * at test time, for private TLS endpoints (PostgreSQL, Kafka, RabbitMQ) of a test's own.
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

  private static final long OPENSSL_TIMEOUT_S = 60;

  /**
   * Creates a CA named {@code name} and a server certificate (CN {@code localhost}) with the given
   * subject alternative names, e.g. {@link #LOOPBACK}, in {@code dir} (created if needed).
   *
   * @throws IllegalStateException when openssl is missing or fails (with its output)
   */
  public static TestCertificates create(Path dir, String name, String subjectAltNames) {
    try {
      Files.createDirectories(dir);
      Path caKey = dir.resolve("ca.key");
      Path ca = dir.resolve("ca.pem");
      Path key = dir.resolve("server.key");
      Path csr = dir.resolve("server.csr");
      Path cert = dir.resolve("server.pem");
      Path ext = dir.resolve("server.ext");
      Path keyStore = dir.resolve("server.p12");
      Path trustStore = dir.resolve("trust.p12");
      String password = "test-store-pw";
      openssl(
          dir,
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          caKey,
          "-out",
          ca,
          "-days",
          "2",
          "-subj",
          "/CN=" + name + " test CA");
      openssl(
          dir,
          "req",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          key,
          "-out",
          csr,
          "-subj",
          "/CN=localhost");
      Files.writeString(
          ext,
          "subjectAltName=" + subjectAltNames + "\nextendedKeyUsage=serverAuth\n",
          StandardCharsets.US_ASCII);
      openssl(
          dir,
          "x509",
          "-req",
          "-in",
          csr,
          "-CA",
          ca,
          "-CAkey",
          caKey,
          "-CAcreateserial",
          "-out",
          cert,
          "-days",
          "2",
          "-extfile",
          ext);
      openssl(
          dir,
          "pkcs12",
          "-export",
          "-in",
          cert,
          "-inkey",
          key,
          "-certfile",
          ca,
          "-name",
          "server",
          "-out",
          keyStore,
          "-passout",
          "pass:" + password);
      writeTrustStore(ca, trustStore, password);
      return new TestCertificates(dir, ca, cert, key, keyStore, trustStore, password);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write test certificates into " + dir, e);
    }
  }

  /** A PKCS12 trust store holding {@code caCertificate} only. */
  private static void writeTrustStore(Path caCertificate, Path trustStore, String password)
      throws IOException {
    try (InputStream in = Files.newInputStream(caCertificate);
        OutputStream out = Files.newOutputStream(trustStore)) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      store.store(out, password.toCharArray());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot write trust store " + trustStore, e);
    }
  }

  private static void openssl(Path dir, Object... args) {
    List<String> command = new ArrayList<>();
    command.add("openssl");
    for (Object a : args) {
      command.add(a.toString());
    }
    try {
      Process p =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      byte[] output = p.getInputStream().readAllBytes();
      if (!p.waitFor(OPENSSL_TIMEOUT_S, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(
            String.join(" ", command) + " failed:\n" + new String(output, StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run openssl (is it installed?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running openssl", e);
    }
  }
}
