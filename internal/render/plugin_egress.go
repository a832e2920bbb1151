package render

import (
	"context"

	"github.com/ferry-gitops/ferry/internal/app"
)

// PluginEgress is the plugin that renders src from the checkout at root,
// as the worker can tell outside the sandbox: the one
// spec.source.plugin.name names, or the first whose discover fileName or
// find.glob matches; "" for any other source, and for a plugin that only
// its find.command discovers (which runs in the sandbox). The worker
// starts that plugin's egress proxy, when its operator gave it a list.
func (r *Renderer) PluginEgress(root string, src app.Source) string {
	t, err := r.detect(context.Background(), root, src, Options{})
	if err != nil || t.plugin == nil {
		return ""
	}
	return t.plugin.FullName()
}
