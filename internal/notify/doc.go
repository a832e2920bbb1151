// Package notify reads Argo CD's notifications configuration — the data
// of its argocd-notifications-cm ConfigMap — and evaluates its triggers,
// renders its templates and sends through its services, so that a team's
// existing configuration tells them what Ferry's apps do.
//
// Keys read from the ConfigMap's data, as Argo CD documents them:
//
//	trigger.<name>           a list of conditions {when, oncePer, send, description}
//	template.<name>          {message, title, and each service's part: email, slack, teams, opsgenie, pagerduty, pagerdutyv2, googlechat, mattermost, webhook.<name>, github}
//	service.<type>[.<name>]  the keys Argo CD's engine reads for email, teams, opsgenie, pagerduty, pagerdutyv2, telegram,
//	                         mattermost, googlechat, slack, github and webhook (one file per type: email.go, teams.go, …)
//	context                  a map of strings templates read as .context
//	defaultTriggers          triggers of subscriptions that name none
//	subscriptions            [{recipients, triggers, selector}]: default subscriptions of the apps whose labels the selector matches
//
// Conditions are github.com/expr-lang/expr expressions over the app, as
// Argo CD evaluates them; templates are Go templates with Sprig's
// functions. Argo CD's catalog of triggers (on-created, on-deleted,
// on-deployed, on-health-degraded, on-sync-failed, on-sync-running,
// on-sync-status-unknown, on-sync-succeeded) is built in, with templates of
// our own for every service (defaults.go); the ConfigMap's own of the same
// name replace them.
//
// Apps subscribe by annotation, as in Argo CD (and by the subscriptions key):
//
//	notifications.argoproj.io/subscribe.<trigger>.<service>: <recipient>[;<recipient>…]
//
// A service value's $key names a secret: it is read, only when sending,
// from the environment (FERRY_NOTIFY_<KEY>, upper case, - and . as _) or a
// Secret manifest file (argocd-notifications-secret), and never appears in
// what Evaluate returns, in an error or in a log.
//
// The package is free of Temporal: Evaluate and Transition are pure, so
// that a workflow can decide what to send; Send renders and sends one
// notification.
package notify
