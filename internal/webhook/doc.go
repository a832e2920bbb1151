// Package webhook receives Git providers' push deliveries (GitHub, GitLab,
// Bitbucket Cloud, Gitea), verifies them, and asks every Application that
// tracks the pushed repository to refresh.
//
// A Receiver is an http.Handler for POST /api/webhook. It answers at once:
// a verified, new push is queued and 202 is returned; a pool of goroutines
// then finds the apps (through an Index over the apps' repo URLs, normalised)
// and signals each through a Refresher, which the worker implements with the
// Temporal client. The package itself knows nothing of Temporal.
//
//	r := webhook.NewReceiver(webhook.DefaultOptions(), refresher,
//		webhook.NewMemoryDeduper(), webhook.NewMetrics(registry))
//	go r.Run(ctx)
//	http.Handle(webhook.Path, r)
package webhook
