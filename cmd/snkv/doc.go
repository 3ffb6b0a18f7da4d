// Command snkv inspects and operates snkv stores from the shell: it lists
// column families with their key counts, reads and writes keys (with TTLs,
// one or several at a time), scans, counts and deletes ranges, prefixes
// and glob patterns, creates, drops and clears column families, purges
// expired keys, checks, repairs, checkpoints, vacuums and backs up stores,
// moves keys in and out as JSON Lines or tab-separated text, reads and
// writes time-series logs (snkv timelog), encrypts, re-keys and decrypts
// stores (snkv encrypt, rekey, decrypt), and runs all of these on one
// store opened once (snkv shell).
//
// Each command is the file cmd_NAME.go with its test beside it;
// commands.go is the one list that registers them.
//
// Install it with
//
//	go install github.com/snkv-go/snkv/cmd/snkv@latest
//
// Every command takes the store file first, then its own arguments; flags
// may come anywhere:
//
//	snkv ls app.db
//	snkv put app.db --cf sessions tok123 '{"user":7}' --ttl 30m
//	snkv get app.db --cf sessions tok123
//	snkv scan app.db --prefix user: --limit 10 --json
//	snkv export app.db --out app.jsonl
//
// Read commands open the store read-only, so they are safe to run next to
// an application that has the store open. An encrypted store takes its
// password or key from --password-file, --key-file, SNKV_PASSWORD,
// SNKV_KEY or a prompt on the terminal, never from a flag's value. Exit
// codes: 0 success, 1 error, 2 usage error, 3 key, column family or
// time-series log not found, 4 the store is damaged, 5 an encrypted store
// without its password or key, or with the wrong one. See docs/cli.md for
// every command and the export format.
package main
