-- An application's own migration, to prove the relay's history never mixes with it.
CREATE TABLE orders (id bigint PRIMARY KEY, total numeric NOT NULL);
