package io.outbox.relay.spi;

/**
 * Which of a plug-in's settings hold secrets, so that the relay masks them in {@code check-config}
 * output and error messages, warns when they are written in plain text, and accepts {@code X-file}
 * for them. A plug-in answers from what its client library declares (Kafka's {@code ConfigDef} type
 * {@code PASSWORD}, the JDBC driver's properties), not from the key's wording.
 *
 * <p>Keys are paths relative to the plug-in's subtree ({@code sink.<type>}, {@code source.<type>},
 * or a driver property name), their parts joined with {@code .} and without quotes, so that {@code
 * producer."ssl.key.password"} and {@code producer.ssl.key.password} are both {@code
 * producer.ssl.key.password}.
 */
@FunctionalInterface
public interface SecretKeys {

  /** What a plug-in knows about one key. */
  enum Answer {
    /** The key holds a secret: masked, warned about when in plain text, {@code X-file} allowed. */
    SECRET,
    /** The key is known and holds no secret (embedded URI passwords are still hidden). */
    NOT_SECRET,
    /** Not known to the plug-in (e.g. a pass-through property): the relay decides by its name. */
    UNKNOWN
  }

  /** The answer for {@code key}, never {@code null}. */
  Answer of(String key);

  /** Knows no key: the relay's name-based fallback decides. */
  static SecretKeys unknown() {
    return key -> Answer.UNKNOWN;
  }

  /** The keys {@code secrets} are secrets; every other key is known and holds none. */
  static SecretKeys named(String... secrets) {
    java.util.Set<String> names = java.util.Set.of(secrets);
    return key -> names.contains(key) ? Answer.SECRET : Answer.NOT_SECRET;
  }

  /**
   * What a client library declares: a key {@code isSecret} accepts is a secret, one {@code isKnown}
   * accepts holds none, any other is left to the relay's fallback by name.
   */
  static SecretKeys declared(
      java.util.function.Predicate<String> isSecret, java.util.function.Predicate<String> isKnown) {
    return key ->
        isSecret.test(key) ? Answer.SECRET : isKnown.test(key) ? Answer.NOT_SECRET : Answer.UNKNOWN;
  }
}
