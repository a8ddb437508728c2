package io.outbox.relay.spi;

import java.util.List;

/** The claim that holds nothing (see {@link Claim#empty()}); may be ended any number of times. */
enum EmptyClaim implements Claim {
  INSTANCE;

  @Override
  public List<OutboxEvent> events() {
    return List.of();
  }

  @Override
  public Settled settle(List<Settlement> settlements) {
    if (!settlements.isEmpty()) {
      throw new IllegalArgumentException("settlements for an empty claim: " + settlements);
    }
    return Settled.AS_GIVEN;
  }

  @Override
  public void release() {}
}
