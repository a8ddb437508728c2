package io.outbox.relay.spi;

/**
 * How the message body is typed: the payload column's type, or the CloudEvents envelope the
 * pipeline wrapped it in; decides the message's content type.
 */
public enum PayloadFormat {
  /** {@code jsonb} or {@code json}: sent as UTF-8 JSON, content type {@code application/json}. */
  JSON("application/json"),
  /** {@code text}: sent as UTF-8 text, content type {@code text/plain; charset=utf-8}. */
  TEXT("text/plain; charset=utf-8"),
  /** {@code bytea}: sent byte for byte, content type {@code application/octet-stream}. */
  BINARY("application/octet-stream"),
  /**
   * A CloudEvents structured-mode body (the JSON event format, the payload inside it), made by the
   * pipeline with {@code cloudevents.mode = structured}; never a column type.
   */
  CLOUDEVENTS_JSON("application/cloudevents+json; charset=utf-8");

  private final String contentType;

  PayloadFormat(String contentType) {
    this.contentType = contentType;
  }

  /** The MIME type a sink announces for this payload. */
  public String contentType() {
    return contentType;
  }
}
