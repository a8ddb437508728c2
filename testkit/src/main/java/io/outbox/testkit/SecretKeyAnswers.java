package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SecretKeys.Answer;

/**
 * Checks what a plug-in's {@link SecretKeys} answer for keys under its namespace, each key named in
 * the failure:
 *
 * <pre>{@code
 * SecretKeyAnswers.of(new FooSinkProvider().secretKeys())
 *     .secret("password")
 *     .notSecret("uri")
 *     .unknown("declare.x.arguments.x-token");
 * }</pre>
 */
public final class SecretKeyAnswers {

  private final SecretKeys keys;

  private SecretKeyAnswers(SecretKeys keys) {
    this.keys = keys;
  }

  public static SecretKeyAnswers of(SecretKeys keys) {
    return new SecretKeyAnswers(keys);
  }

  /** Each of {@code paths} (relative to the plug-in's namespace) is {@link Answer#SECRET}. */
  public SecretKeyAnswers secret(String... paths) {
    return answer(Answer.SECRET, paths);
  }

  /** Each of {@code paths} is {@link Answer#NOT_SECRET}. */
  public SecretKeyAnswers notSecret(String... paths) {
    return answer(Answer.NOT_SECRET, paths);
  }

  /** Each of {@code paths} is {@link Answer#UNKNOWN}: left to the relay's own rule. */
  public SecretKeyAnswers unknown(String... paths) {
    return answer(Answer.UNKNOWN, paths);
  }

  private SecretKeyAnswers answer(Answer expected, String... paths) {
    for (String path : paths) {
      assertThat(keys.of(path)).as(path).isEqualTo(expected);
    }
    return this;
  }
}
