package io.outbox.source.postgres;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.postgresql.PGProperty;

/**
 * What the PostgreSQL JDBC driver declares about its connection properties ({@code
 * database.properties.<name>}, or URL parameters), so that the relay masks the ones that hold
 * secrets and shows the others. The driver has no "secret" flag; the secrets among its {@link
 * PGProperty} constants are:
 *
 * <ul>
 *   <li>{@link PGProperty#PASSWORD} ({@code password}): the user's password;
 *   <li>{@link PGProperty#SSL_PASSWORD} ({@code sslpassword}): the password of the client's TLS
 *       key.
 * </ul>
 *
 * <p>Every other property is not a secret: {@code user}; {@code sslkey}, {@code sslcert} and {@code
 * sslrootcert} are file locations (the key file's content is not in the config); {@code
 * sslpasswordcallback}, {@code sslfactory}, {@code socketFactory}, {@code
 * authenticationPluginClassName} and {@code connectExecutor} name classes; their {@code *arg}
 * arguments and {@code options} are passed to such classes or to the server as documented, and are
 * shown (a secret a custom class needs belongs in its own file or environment, not in an argument).
 */
public final class DriverProperties {

  private static final Set<String> SECRETS =
      Set.of(PGProperty.PASSWORD.getName(), PGProperty.SSL_PASSWORD.getName());

  private static final Set<String> KNOWN =
      Arrays.stream(PGProperty.values()).map(PGProperty::getName).collect(Collectors.toSet());

  private DriverProperties() {}

  /** Whether the driver property {@code name} holds a secret. */
  public static boolean isSecret(String name) {
    return SECRETS.contains(name);
  }

  /** Whether {@code name} is one of the driver's properties. */
  public static boolean isKnown(String name) {
    return KNOWN.contains(name);
  }
}
