package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.TransactionalSink;

/**
 * What the lanes of a pipeline share.
 *
 * @param deadLetterRouter where dead letters are copied to, or {@code null}
 * @param transactional the sink as a transactional one (exactly-once), or {@code null}
 * @param recovery the ledger recovery (exactly-once), or {@code null}
 */
record LaneContext(
    Source source,
    Sink sink,
    Router router,
    SettlementPlanner planner,
    SinkGate gate,
    RetryPolicy errorBackoff,
    PipelineStats stats,
    int batchSize,
    Router deadLetterRouter,
    TransactionalSink transactional,
    LedgerRecovery recovery) {}
