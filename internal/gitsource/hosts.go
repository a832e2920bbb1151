package gitsource

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// checkHost applies Options.Hosts before a request to repoURL: a literal
// address or a metadata name is refused without a lookup; the name of an
// ssh:// (or scp-like) repository is looked up and each of its addresses
// checked, since the SSH transport dials without InstallHostPolicy's
// check. HTTP(S) names are checked where they are dialled.
func (r *Repos) checkHost(ctx context.Context, repoURL string) error {
	h := r.opts.Hosts
	if h == nil {
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("%s: %w", RedactURL(repoURL), err) }
	if err := h.CheckURL(repoURL); err != nil {
		return fail(err)
	}
	if scheme, _, _, _ := splitURL(repoURL); scheme != "ssh" {
		return nil
	}
	host, port := netpolicy.URLHost(repoURL)
	if port == "" {
		port = "22"
	}
	if err := h.CheckHost(host, port); err != nil || net.ParseIP(host) != nil {
		return err
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the transport reports it
	}
	for _, a := range addrs {
		if err := h.CheckAddr(a, port); err != nil {
			return fail(fmt.Errorf("%s resolves to an address the policy refuses: %w", host, err))
		}
	}
	return nil
}

// InstallHostPolicy makes every HTTP(S) Git request of this process dial
// through hosts (netpolicy.Hosts.DialContext), redirects included. go-git
// keeps its transports per process, so this is the worker's to call once
// at start, with the Hosts it gives Options.
func InstallHostPolicy(hosts *netpolicy.Hosts) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = hosts.DialContext
	c := githttp.NewClient(&http.Client{Transport: tr})
	client.InstallProtocol("http", c)
	client.InstallProtocol("https", c)
}
