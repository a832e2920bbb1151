package sandbox

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/egress"
)

// EgressDir is where a render whose plugin has an egress list sees its
// egress proxy's directory, which holds the proxy's socket only.
const EgressDir = "/ferry/egress"

// startEgress starts the egress proxy of the render of src from the
// checkout at real, when the plugin that renders it has an egress list
// (Renderer.Egress): the proxy, and the mount of its directory; nil, nil
// for any other render, which gets no proxy and so no network.
func (r *Renderer) startEgress(real string, src app.Source) (*egress.Proxy, []Mount, error) {
	if r.Egress.Empty() {
		return nil, nil, nil
	}
	plugin := r.settings().PluginEgress(real, src)
	policy, ok := r.Egress.For(plugin)
	if plugin == "" || !ok {
		return nil, nil, nil
	}
	proxy, err := egress.Start("", policy)
	if err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", displayAppPath(src.Path), err)
	}
	return proxy, []Mount{{Source: proxy.Dir(), Target: EgressDir, Sockets: true}}, nil
}
