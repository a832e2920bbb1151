package egress

import (
	"fmt"
	"strings"
)

// RefusedError is a render that failed after its plugin's egress proxy
// refused connections: the render's error, and what was refused.
type RefusedError struct {
	Plugin  string
	Refused []Refusal
	Err     error
}

func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		parts[i] = r.Target + " " + r.Reason
	}
	return fmt.Sprintf("%v; plugin %s's egress proxy refused: %s", e.Err, e.Plugin, strings.Join(parts, "; "))
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Explain adds to a render's error what the proxy refused, when it
// refused anything: the plugin's own message rarely names the host (curl
// says "CONNECT tunnel failed, response 403").
func Explain(err error, p *Proxy) error {
	if err == nil || p == nil {
		return err
	}
	refused := p.Refused()
	if len(refused) == 0 {
		return err
	}
	return &RefusedError{Plugin: p.policy.Plugin, Refused: refused, Err: err}
}
