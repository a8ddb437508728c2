// Writes an order and its OrderPlaced event in one transaction with node-postgres (pg).
// Connects with the libpq environment variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD).
//
//   npm install && node place-order.js ORDER_ID
'use strict';
const { Client } = require('pg');

async function placeOrder(client, orderId) {
  await client.query('BEGIN');
  try {
    await client.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [orderId, 42.5]);
    await client.query(
      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)" +
        " VALUES ('order', $1, 'OrderPlaced', $2)",
      [orderId, JSON.stringify({ orderId, total: 42.5 })],
    );
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  }
}

async function main() {
  if (process.argv.length !== 3) {
    console.error('usage: node place-order.js ORDER_ID');
    process.exit(2);
  }
  const client = new Client(); // no settings: the PG* variables
  await client.connect();
  try {
    await placeOrder(client, process.argv[2]);
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
