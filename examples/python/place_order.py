"""Writes an order and its OrderPlaced event in one transaction with psycopg 3.

Connects with the libpq environment variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD).

    python3 place_order.py ORDER_ID
"""

import sys

import psycopg
from psycopg.types.json import Jsonb


def place_order(conn: psycopg.Connection, order_id: str) -> None:
    # Commits when the block ends, rolls back if it raises.
    with conn.transaction():
        conn.execute("INSERT INTO orders (id, total) VALUES (%s, %s)", (order_id, 42.5))
        conn.execute(
            "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
            " VALUES ('order', %s, 'OrderPlaced', %s)",
            (order_id, Jsonb({"orderId": order_id, "total": 42.5})),
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 place_order.py ORDER_ID")
    with psycopg.connect(autocommit=True) as conn:  # no arguments: the PG* variables
        place_order(conn, sys.argv[1])
