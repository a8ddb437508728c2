package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.TransactionalSink;
import java.time.Clock;

/**
 * What the lanes of a pipeline share.
 *
 * @param pipeline the pipeline's name, for the log
 * @param clock the clock of the commit-to-ack latency and the wake stage
 * @param ticker what the lanes measure stages, pauses and stalls on
 * @param deadLetterRouter where dead letters are copied to, or {@code null}
 * @param form what each message is made of (plain, or a CloudEvent)
 * @param transactional the sink as a transactional one (exactly-once), or {@code null}
 * @param recovery the ledger recovery (exactly-once), or {@code null}
 * @param tracing the pipeline's spans ({@link EventTracing#off()} when tracing is off)
 */
record LaneContext(
    String pipeline,
    Clock clock,
    Ticker ticker,
    Source source,
    Sink sink,
    Router router,
    SettlementPlanner planner,
    SinkGate gate,
    RetryPolicy errorBackoff,
    PipelineStats stats,
    int batchSize,
    Router deadLetterRouter,
    MessageForm form,
    TransactionalSink transactional,
    LedgerRecovery recovery,
    EventTracing tracing) {}
