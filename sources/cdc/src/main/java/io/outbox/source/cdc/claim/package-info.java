/**
 * A lane's claims from the stream ({@link io.outbox.source.cdc.claim.StreamClaims}): the rows of
 * the events taken read first (published, due later, or not visible yet), and the verdicts written
 * fenced by the lease's epoch ({@link io.outbox.source.cdc.claim.ClaimWriter}).
 */
package io.outbox.source.cdc.claim;
