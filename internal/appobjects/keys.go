package appobjects

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// splitKey splits "namespace/name".
func splitKey(key string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return "", "", fmt.Errorf("application object %q: want namespace/name", key)
	}
	return ns, name, nil
}

func joinProblems(msgs []string) string { return strings.Join(msgs, "; ") }

// appName is the name of the app of the object name in namespace ns: the
// object's name in the control namespace, namespace/name in another.
func (c *Controller) appName(ns, name string) string {
	if ns == c.Namespace {
		return name
	}
	return app.QualifiedName(ns, name)
}

// objectKey is the key of the object of app appName (see appName).
func (c *Controller) objectKey(appName string) string {
	if ns, name := app.SplitName(appName); ns != "" {
		return Key(ns, name)
	}
	return Key(c.Namespace, appName)
}

// watches reports whether the objects of namespace ns are apps.
func (c *Controller) watches(ns string) bool {
	return ns == c.Namespace || app.NamespaceListed(c.AppNamespaces, ns)
}

// listed reports whether the object of key is in a namespace whose objects
// are apps; of any other namespace the first object is logged, once.
func (c *Controller) listed(key string) bool {
	ns, _, err := splitKey(key)
	if err != nil {
		return false
	}
	if c.watches(ns) {
		return true
	}
	if _, said := c.ignored.LoadOrStore(ns, true); !said {
		slog.Warn("applications: ignoring the Application objects of a namespace --app-namespaces does not list; add it (or a glob of it) to run them",
			"namespace", ns, "object", key)
	}
	return false
}
