package io.outbox.relay.spi;

/** How the payload column was typed; decides the message's content type. */
public enum PayloadFormat {
  /** {@code jsonb} or {@code json}: sent as UTF-8 JSON, content type {@code application/json}. */
  JSON("application/json"),
  /** {@code text}: sent as UTF-8 text, content type {@code text/plain; charset=utf-8}. */
  TEXT("text/plain; charset=utf-8"),
  /** {@code bytea}: sent byte for byte, content type {@code application/octet-stream}. */
  BINARY("application/octet-stream");

  private final String contentType;

  PayloadFormat(String contentType) {
    this.contentType = contentType;
  }

  /** The MIME type a sink announces for this payload. */
  public String contentType() {
    return contentType;
  }
}
