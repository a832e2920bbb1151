// Package ferryclient is the Temporal client of Ferry's workflows: it
// starts apps, projects and ApplicationSets, sends them their updates and
// signals, queries their views and lists them by search attributes, with
// the names and payloads of package contract. The CLI, the activities that
// drive other workflows, the benchmarks and the end-to-end tests call it;
// it is the only code besides the workers' main that holds a
// go.temporal.io/sdk/client.Client.
package ferryclient
