// Writes an order and its OrderPlaced event in one transaction with pgx.
// Connects with the libpq environment variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD).
//
//	go run main.go ORDER_ID
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/jackc/pgx/v4"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run main.go ORDER_ID")
		os.Exit(2)
	}
	if err := placeOrder(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func placeOrder(ctx context.Context, orderID string) error {
	conn, err := pgx.Connect(ctx, "") // "": the PG* environment variables
	if err != nil {
		return err
	}
	defer conn.Close(ctx)

	payload, err := json.Marshal(map[string]any{"orderId": orderID, "total": 42.5})
	if err != nil {
		return err
	}
	// BeginFunc commits when the function returns nil, and rolls back otherwise.
	return conn.BeginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			"INSERT INTO orders (id, total) VALUES ($1, $2)", orderID, 42.5); err != nil {
			return err
		}
		_, err := tx.Exec(ctx,
			`INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
			 VALUES ('order', $1, 'OrderPlaced', $2)`,
			orderID, string(payload))
		return err
	})
}
