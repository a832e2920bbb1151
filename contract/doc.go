// Package contract is Ferry's public Temporal contract: what crosses a
// process boundary between the CLI, the workers and scripts that drive
// Ferry with the temporal CLI. It holds the workflow types and IDs, the
// task queues, the names of signals, queries, updates and activities,
// their payloads and results, the views the status queries answer, the
// error types activities mark non-retryable, and the search attributes.
//
// Every name and JSON field here is recorded in running workflows'
// histories and typed by users' scripts: renaming one breaks both. Add,
// never rename; docs/reference/temporal.md is generated from this package.
// The workflows (package workflows) and the client (package ferryclient)
// both build on it; it depends on neither, and does no I/O.
package contract
