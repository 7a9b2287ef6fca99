module github.com/ghonce/ghonce/adapters/dbos

go 1.26.0

require (
	github.com/dbos-inc/dbos-transact-golang v1.8.0
	github.com/ghonce/ghonce v0.0.0
)

require (
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/google/go-github/v66 v66.0.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgerrcode v0.0.0-20250907135507-afb5586c32a6 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

// Development in this repository: the core module is the checkout this
// directory is in. A build that depends on this module ignores it.
replace github.com/ghonce/ghonce => ../..
