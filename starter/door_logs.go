package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/app"
)

// `ferry app logs` through ferry-server: the server streams Argo CD's log
// entries, one JSON object a line, each naming its region, namespace, pod
// and container; the CLI prints them as its direct path does.

// logLine is one entry of the server's stream.
type logLine struct {
	Content   string `json:"content"`
	Pod       string `json:"podName"`
	Namespace string `json:"namespace"`
	Container string `json:"containerName"`
	Region    string `json:"region"`
	Last      bool   `json:"last"`
}

// streamOf names the container a line comes from.
func (l logLine) streamOf() [4]string { return [4]string{l.Region, l.Namespace, l.Pod, l.Container} }

// errLogEnd stops reading the stream at its last entry.
var errLogEnd = errors.New("the log stream's last entry")

func doorLogs(cmd *cobra.Command, a *api, f *logsFlags, name string) error {
	if err := refuseFlags(cmd, map[string]string{"kubeconfig": serverReadsRegions}); err != nil {
		return err
	}
	ctx := cmd.Context()
	path, q := appPath(name, "/logs")
	for k, v := range map[string]string{"group": f.group, "kind": f.kind, "resourceName": f.name, "namespace": f.namespace, "container": f.container} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(f.tail, 10))
	}
	if f.since > 0 {
		q.Set("sinceSeconds", strconv.FormatInt(int64(math.Ceil(f.since.Seconds())), 10))
	}
	q.Set("follow", strconv.FormatBool(f.follow))
	q.Set("previous", strconv.FormatBool(f.previous))
	regionQuery(q, f.regions)
	p := &logPrinter{out: cmd.OutOrStdout()}
	if f.follow {
		// Streams run at once and never end: whether there may be
		// more than one is decided before the first line.
		one, err := oneContainer(ctx, a, f, name)
		if err != nil {
			return err
		}
		p.decide(!one)
	}
	var failed []error
	err := a.stream(ctx, path, q, func(raw []byte) error {
		var msg struct {
			Result *logLine
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			return fmt.Errorf("ferry-server's log stream: %w", err)
		}
		switch {
		case msg.Error != nil:
			failed = append(failed, errors.New(msg.Error.Message))
		case msg.Result != nil && msg.Result.Last:
			return errLogEnd
		case msg.Result != nil:
			p.print(*msg.Result)
		}
		return nil
	})
	p.decide(false)
	switch {
	case errors.Is(err, errLogEnd):
	case err != nil:
		failed = append(failed, err)
	case ctx.Err() == nil:
		failed = append(failed, fmt.Errorf("app %q: ferry-server ended the log stream before its last entry", name))
	}
	return errors.Join(failed...)
}

// oneContainer: the flags name one container of one Pod that the app
// deploys in one region, so that its lines need no prefix.
func oneContainer(ctx context.Context, a *api, f *logsFlags, name string) (bool, error) {
	if f.kind != "Pod" || f.group != "" || f.name == "" || f.container == "" {
		return false, nil
	}
	v, err := doorView(ctx, a, name, nil)
	if err != nil {
		return false, err
	}
	pods := 0
	for _, r := range v.Status.Resources {
		if (len(f.regions) == 0 || contains(f.regions, r.Region)) && f.selects(r.ResourceKey) && r.Kind != app.Kind {
			pods++
		}
	}
	return pods == 1, nil
}

// logPrinter prints lines as the direct path does: with a [region
// namespace/pod container] prefix when more than one container's lines
// come. Until that is decided, it holds the lines of the first container.
type logPrinter struct {
	out     io.Writer
	decided bool
	prefix  bool
	held    []logLine
}

// decide settles the prefix and prints the lines held.
func (p *logPrinter) decide(prefix bool) {
	if p.decided {
		return
	}
	p.decided, p.prefix = true, prefix
	for _, l := range p.held {
		p.write(l)
	}
	p.held = nil
}

func (p *logPrinter) print(l logLine) {
	switch {
	case p.decided:
		p.write(l)
	case len(p.held) > 0 && p.held[0].streamOf() != l.streamOf():
		p.decide(true)
		p.write(l)
	default:
		p.held = append(p.held, l)
	}
}

func (p *logPrinter) write(l logLine) {
	if p.prefix {
		fmt.Fprintf(p.out, "[%s %s/%s %s] ", l.Region, l.Namespace, l.Pod, l.Container)
	}
	fmt.Fprintln(p.out, l.Content)
}
