// Package notify reads Argo CD's notifications configuration — the data
// of its argocd-notifications-cm ConfigMap — and evaluates its triggers,
// renders its templates and sends through its services, so that a team's
// existing configuration tells them what Ferry's apps do.
//
// Keys read from the ConfigMap's data, as Argo CD documents them:
//
//	trigger.<name>           a list of conditions {when, oncePer, send, description}
//	template.<name>          {message, title, webhook.<name>.{method,path,body}, slack.{attachments,blocks,…}, github.{repoURLPath,revisionPath,status}}
//	service.webhook.<name>   {url, headers: [{name, value}], basicAuth: {username, password}, insecureSkipVerify}
//	service.slack[.<name>]   {token, apiURL, username, icon} or {webhookURL} (an incoming webhook)
//	service.github[.<name>]  {appID, installationID, privateKey, enterpriseBaseURL} or {token}
//	context                  a map of strings templates read as .context
//	defaultTriggers          triggers of subscriptions that name none
//	subscriptions            [{recipients, triggers, selector}]: default subscriptions of the apps whose labels the selector matches
//
// Conditions are github.com/expr-lang/expr expressions over the app, as
// Argo CD evaluates them; templates are Go templates with Sprig's
// functions. The triggers and templates of Argo CD's catalog that its
// documentation names (on-sync-succeeded, on-sync-failed, on-sync-running,
// on-health-degraded, on-deployed) are built in; the ConfigMap's own of the
// same name replace them.
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
