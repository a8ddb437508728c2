package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;

/**
 * What is left in memory of a held-back key's streamed events once they were parked (a full lane
 * while one of its events waits for a retry): the range of row ids still to be read back from the
 * outbox table once the key is released, how many events went into it, and the pin, the stream
 * position of the earliest of them, which the watermark cannot pass until every parked row is
 * final. Guarded by the stream's lock.
 */
final class ParkedKey {

  private final AggregateKey key;
  private long firstId; // the lowest id not read back yet
  private long lastId; // the highest id parked
  private long count; // events parked so far (diagnostics)
  private Watermark.Position pin;

  ParkedKey(AggregateKey key, long id, Watermark.Position pin) {
    this.key = key;
    this.firstId = id;
    this.lastId = id;
    this.count = 1;
    this.pin = pin;
  }

  AggregateKey key() {
    return key;
  }

  long firstId() {
    return firstId;
  }

  long lastId() {
    return lastId;
  }

  long count() {
    return count;
  }

  Watermark.Position pin() {
    return pin;
  }

  /** One more event of the key left memory. */
  void add(long id) {
    firstId = Math.min(firstId, id);
    lastId = Math.max(lastId, id);
    count++;
  }

  /**
   * Makes {@code earlier} the pin (an event put back from a claim parked after later ones).
   *
   * @return the former pin, whose hold the caller releases
   */
  Watermark.Position repin(Watermark.Position earlier) {
    Watermark.Position old = pin;
    pin = earlier;
    return old;
  }

  /** The rows up to {@code id} were read back. */
  void readUpTo(long id) {
    firstId = Math.max(firstId, id + 1);
  }

  /** Whether an event of this key with row id {@code id} may be taken (it is not still parked). */
  boolean allows(long id) {
    return id < firstId;
  }
}
