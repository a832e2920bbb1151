package notify

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
)

// SubscribeAnnotation begins the annotation by which an app subscribes:
// notifications.argoproj.io/subscribe.<trigger>.<service>: <recipients>.
const SubscribeAnnotation = "notifications.argoproj.io/subscribe."

// Subscription is one (trigger, service, recipient) an app asks for. An
// empty Trigger means the ConfigMap's defaultTriggers.
type Subscription struct {
	Trigger   string `json:"trigger,omitempty"`
	Service   string `json:"service"`
	Recipient string `json:"recipient,omitempty"`
}

// Subscriptions reads an app's subscribe annotations, in a stable order.
// The value lists recipients separated by ";" (or ","); an empty value is
// one empty recipient (a webhook or GitHub needs none).
func Subscriptions(annotations map[string]string) []Subscription {
	var subs []Subscription
	for _, k := range sortedKeys(annotations) {
		rest, ok := strings.CutPrefix(k, SubscribeAnnotation)
		if !ok || rest == "" {
			continue
		}
		trigger, service, found := strings.Cut(rest, ".")
		if !found {
			trigger, service = "", rest
		}
		recipients := strings.FieldsFunc(annotations[k], func(r rune) bool { return r == ';' || r == ',' })
		if len(recipients) == 0 {
			recipients = []string{""}
		}
		for _, r := range recipients {
			subs = append(subs, Subscription{Trigger: trigger, Service: service, Recipient: strings.TrimSpace(r)})
		}
	}
	return subs
}

// Result is one condition of a trigger for one destination.
type Result struct {
	// Key is what the app remembers having sent, as Argo CD keys its
	// notified annotation: [oncePer:]trigger:[i].hash(when):service:recipient.
	Key       string   `json:"key"`
	Trigger   string   `json:"trigger"`
	Templates []string `json:"templates"`
	Service   string   `json:"service"`
	Recipient string   `json:"recipient,omitempty"`
	OncePer   string   `json:"oncePer,omitempty"`
	Triggered bool     `json:"triggered"`
}

// Evaluate runs the triggers the app subscribes to (by annotation, subs,
// and by the ConfigMap's subscriptions that select its labels) over the
// app's object (AppObject). Problems (an unknown trigger or service, a failing
// expression) are returned beside the results, as Argo CD logs them: they
// never name a secret.
func (c *Config) Evaluate(appObject json.RawMessage, subs []Subscription, now time.Time) ([]Result, []string) {
	if c == nil || (len(subs) == 0 && !c.HasSubscriptions()) {
		return nil, nil
	}
	obj, err := decodeApp(appObject)
	if err != nil {
		return nil, []string{err.Error()}
	}
	subs = c.withGlobal(obj, subs)
	env := helpers(func() time.Time { return now })
	env["app"] = obj
	var out []Result
	var problems []string
	for _, sub := range subs {
		if c.services[sub.Service] == nil {
			problems = append(problems, fmt.Sprintf("subscription to service %q: no service.%s is configured", sub.Service, sub.Service))
			continue
		}
		triggers := []string{sub.Trigger}
		if sub.Trigger == "" {
			triggers = c.defaultTriggers
		}
		for _, name := range triggers {
			conds, ok := c.triggers[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("subscription to trigger %q: no such trigger is configured or built in", name))
				continue
			}
			for i, cond := range conds {
				r := Result{Trigger: name, Templates: cond.Send, Service: sub.Service, Recipient: sub.Recipient}
				if v, err := expr.Run(c.programs[cond.When], env); err != nil {
					problems = append(problems, fmt.Sprintf("trigger %q condition %d: %v", name, i, err))
				} else {
					b, _ := v.(bool)
					r.Triggered = b
				}
				if r.Triggered && cond.OncePer != "" {
					if v, err := expr.Run(c.programs[cond.OncePer], env); err != nil {
						problems = append(problems, fmt.Sprintf("trigger %q condition %d oncePer: %v", name, i, err))
					} else if v != nil {
						r.OncePer = fmt.Sprint(v)
					}
				}
				r.Key = fmt.Sprintf("%s:[%d].%s:%s:%s", name, i, hash(cond.When), sub.Service, sub.Recipient)
				if r.OncePer != "" {
					r.Key = r.OncePer + ":" + r.Key
				}
				out = append(out, r)
			}
		}
	}
	return out, problems
}

func hash(s string) string {
	h := sha1.Sum([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// Notified is a key the app has sent for, and the sequence number of the
// transition that sent it.
type Notified struct {
	Key string `json:"key"`
	Seq int64  `json:"seq"`
}

// MaxNotified bounds what an app remembers, as Argo CD bounds its notified
// annotation: the oldest keys go first.
const MaxNotified = 100

// Transition applies Argo CD's rule to what the app remembers: a condition
// that holds and was not notified is sent and remembered; one that no
// longer holds is forgotten (unless keyed by oncePer), so that it is sent
// again the next time it holds. seq numbers the sends; it is advanced by
// one per send. The result is sorted by key.
func Transition(notified []Notified, results []Result, seq *int64) ([]Notified, []Result) {
	state := make(map[string]int64, len(notified))
	for _, n := range notified {
		state[n.Key] = n.Seq
	}
	var send []Result
	for _, r := range results {
		_, was := state[r.Key]
		switch {
		case r.Triggered && !was:
			*seq++
			state[r.Key] = *seq
			send = append(send, r)
		case !r.Triggered && was && r.OncePer == "":
			delete(state, r.Key)
		}
	}
	next := make([]Notified, 0, len(state))
	for k, s := range state {
		next = append(next, Notified{Key: k, Seq: s})
	}
	sort.Slice(next, func(i, j int) bool {
		return next[i].Seq > next[j].Seq || (next[i].Seq == next[j].Seq && next[i].Key < next[j].Key)
	})
	if len(next) > MaxNotified {
		next = next[:MaxNotified]
	}
	sort.Slice(next, func(i, j int) bool { return next[i].Key < next[j].Key })
	return next, send
}
