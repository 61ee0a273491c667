#!/bin/sh
# Creates or upgrades Temporal's two PostgreSQL databases (run by the temporal-schema service,
# image temporalio/admin-tools, before the server starts). Safe to run on every `up`:
# a database is created and initialised only when missing; update-schema applies only the
# versions newer than the one recorded in the database.
set -eu

: "${SQL_HOST:=postgresql}"
: "${SQL_PORT:=5432}"
: "${SQL_USER:=temporal}"
: "${SQL_PASSWORD:?SQL_PASSWORD must be set}"
export SQL_PASSWORD
: "${SCHEMA_ROOT:=/etc/temporal/schema/postgresql/v12}"

echo "waiting for PostgreSQL at $SQL_HOST:$SQL_PORT"
tries=0
until nc -z "$SQL_HOST" "$SQL_PORT"; do
  tries=$((tries + 1))
  [ "$tries" -lt 120 ] || { echo "PostgreSQL did not come up" >&2; exit 1; }
  sleep 1
done

sqltool() {
  temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" -p "$SQL_PORT" -u "$SQL_USER" "$@"
}

# Each step is idempotent (checked with temporal-sql-tool 1.32.0 against PostgreSQL): `create`
# succeeds when the database exists, `setup-schema -v 0.0` leaves an existing version alone, and
# `update-schema` applies only the versions newer than the recorded one.
for pair in temporal:temporal visibility:temporal_visibility; do
  kind=${pair%%:*}
  db=${pair#*:}
  sqltool --db "$db" create
  sqltool --db "$db" setup-schema -v 0.0
  sqltool --db "$db" update-schema -d "$SCHEMA_ROOT/$kind/versioned"
  echo "database $db is at the current schema"
done
echo "Temporal schema is current"
