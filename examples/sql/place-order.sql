-- Writes an order and its OrderPlaced event in one transaction.
--   psql -v ON_ERROR_STOP=1 -v order_id=42 -f place-order.sql
-- Connects as psql does (the PG* environment variables or psql's options).
BEGIN;

INSERT INTO orders (id, total) VALUES (:'order_id', 42.5);

INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
VALUES ('order', :'order_id', 'OrderPlaced',
        jsonb_build_object('orderId', :'order_id', 'total', 42.5));

COMMIT;
