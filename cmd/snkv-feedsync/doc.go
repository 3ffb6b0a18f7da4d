// Command snkv-feedsync is an example of the change feed (package
// changefeed, docs/changes.md): a device store pushes the changes of one of
// its column families to a second store over HTTP, survives the kill of
// either side, and resumes where it stopped.
//
// The server applies each batch POSTed to it, and the position that batch
// reaches, in one transaction of its own store; it skips the changes of a
// batch it has already applied, so a retried push is harmless, and answers
// with the position it has reached:
//
//	snkv-feedsync server -store server.db -listen 127.0.0.1:8377
//
// The device reads its store's feed as a named consumer, POSTs the changes
// in batches of JSON, and saves its consumer position only after the server
// answered; it then waits for new commits. When the server is down it
// retries with a growing delay:
//
//	snkv-feedsync device -store device.db -push http://127.0.0.1:8377/push -cf users -prefix user:
//
// Delivery is at least once and applying is idempotent, so each change
// takes effect on the server exactly once. On its first run (no saved
// position) the device sends a snapshot of the column family under the
// prefix (changefeed.Snapshot) and continues from the position it reports.
// A device whose saved position the feed no longer holds (trimmed:
// ErrCompacted) or that belongs to another history of the store (a restore:
// ErrEpoch) stops with a message saying so; run it again with -resnapshot
// to send a fresh snapshot and continue from it. Ctrl-C ends either role
// cleanly.
package main
