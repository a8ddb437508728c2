-- The business table of the examples: each example inserts an order and its OrderPlaced event
-- in one transaction. The outbox itself comes from `outbox-relay migrate` (or its
-- `migrate --print-sql` script).
CREATE TABLE IF NOT EXISTS orders (
    id         text          PRIMARY KEY,
    total      numeric(12,2) NOT NULL,
    created_at timestamptz   NOT NULL DEFAULT now()
);
