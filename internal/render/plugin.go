package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// SourceTypePlugin is a source rendered by a config-management plugin, as
// Argo CD names it.
const SourceTypePlugin = "Plugin"

// PluginAPIVersion and PluginKind are what a ConfigManagementPlugin file
// starts with, as Argo CD's sidecar plugins write it.
const (
	PluginAPIVersion = "argoproj.io/v1alpha1"
	PluginKind       = "ConfigManagementPlugin"
)

// Plugin is a config-management plugin: Argo CD's ConfigManagementPlugin
// (the plugin.yaml of a sidecar). It is not a Kubernetes object; the
// worker reads it from --plugin-dir.
type Plugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   PluginMetadata `json:"metadata"`
	Spec       PluginSpec     `json:"spec"`
}

// PluginMetadata names a plugin.
type PluginMetadata struct {
	Name string `json:"name"`
}

// PluginSpec is what a plugin runs.
type PluginSpec struct {
	// Version, when set, makes the name an Application gives
	// <name>-<version>, as in Argo CD.
	Version string `json:"version,omitempty"`
	// Init runs before Generate in the app directory; its output is
	// ignored, a non-zero status fails the render.
	Init *PluginCommand `json:"init,omitempty"`
	// Generate prints the manifests (YAML or JSON) on stdout.
	Generate PluginCommand `json:"generate"`
	// Discover says which sources the plugin renders when they name no
	// plugin; without it the plugin renders only sources that name it.
	Discover *PluginDiscover `json:"discover,omitempty"`
	// Parameters announce the parameters the plugin reads, for UIs; Ferry
	// checks and keeps them but hands the plugin only an Application's
	// own spec.source.plugin.parameters, as Argo CD does.
	Parameters *PluginParameters `json:"parameters,omitempty"`
	// PreserveFileMode keeps the repository's file modes (executable
	// bits) in the plugin's copy of it; off, every file is 0644.
	PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	// ProvideGitCreds is Argo CD's; Ferry never gives a plugin the
	// worker's Git credentials, so a plugin asking for them is refused.
	ProvideGitCreds bool `json:"provideGitCreds,omitempty"`
}

// PluginCommand is an argv: Command, then Args.
type PluginCommand struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

func (c PluginCommand) argv() []string { return append(slices.Clone(c.Command), c.Args...) }

// PluginDiscover matches sources: the first of FileName, Find.Glob and
// Find.Command that is set decides.
type PluginDiscover struct {
	// FileName is a glob (path/filepath.Match) in the app directory.
	FileName string      `json:"fileName,omitempty"`
	Find     *PluginFind `json:"find,omitempty"`
}

// PluginFind is a ** glob in the app directory, or a command run there
// that matches when it exits 0 and prints something.
type PluginFind struct {
	Glob    string   `json:"glob,omitempty"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// PluginParameters are the plugin's parameter announcements.
type PluginParameters struct {
	Static  []PluginParameterAnnouncement `json:"static,omitempty"`
	Dynamic *PluginCommand                `json:"dynamic,omitempty"`
}

// PluginParameterAnnouncement is one announced parameter and its default.
type PluginParameterAnnouncement struct {
	Name           string            `json:"name"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         *string           `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// FullName is the name an Application's spec.source.plugin.name gives:
// <name>-<version> when the plugin has a version, as in Argo CD.
func (p *Plugin) FullName() string {
	if p.Spec.Version != "" {
		return p.Metadata.Name + "-" + p.Spec.Version
	}
	return p.Metadata.Name
}

// Digest identifies the plugin's definition: a changed plugin renders
// again rather than reuse sets its old definition made.
func (p *Plugin) Digest() string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// LoadPlugins reads the ConfigManagementPlugin files (*.yaml, *.yml) at
// the top of dir and checks them; every problem of every file is in the
// error, each naming the file, the field and the fix. Plugins are sorted
// by FullName, the order in which discovery tries them.
func LoadPlugins(dir string) ([]*Plugin, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin directory: %w", err)
	}
	var plugins []*Plugin
	var errs []error
	byName := map[string]string{}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || ext != ".yaml" && ext != ".yml" {
			continue
		}
		file := filepath.Join(dir, e.Name())
		p, perrs := loadPlugin(file)
		errs = append(errs, perrs...)
		if p == nil || len(perrs) > 0 {
			continue
		}
		if other, dup := byName[p.FullName()]; dup {
			errs = append(errs, fmt.Errorf("%s: metadata.name: plugin %q is also defined in %s: give each plugin its own name (or version)", file, p.FullName(), other))
			continue
		}
		byName[p.FullName()] = file
		plugins = append(plugins, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(plugins, func(a, b *Plugin) int { return strings.Compare(a.FullName(), b.FullName()) })
	return plugins, nil
}

func loadPlugin(file string) (*Plugin, []error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []error{err}
	}
	var p Plugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		msg := err.Error()
		for _, prefix := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		return nil, []error{fmt.Errorf("%s: %s: fix the spelling or the value; write one ConfigManagementPlugin (apiVersion %s) with the fields of Argo CD's plugin.yaml", file, msg, PluginAPIVersion)}
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", file, field, fmt.Sprintf(format, args...)))
	}
	if p.APIVersion != PluginAPIVersion {
		add("apiVersion", "%q: write apiVersion: %s", p.APIVersion, PluginAPIVersion)
	}
	if p.Kind != PluginKind {
		add("kind", "%q: write kind: %s", p.Kind, PluginKind)
	}
	if msg := checkPluginName(p.Metadata.Name); msg != "" {
		add("metadata.name", "%s", msg)
	}
	if v := p.Spec.Version; v != "" && strings.ContainsFunc(v, func(r rune) bool { return r == '/' || r <= ' ' }) {
		add("spec.version", "%q may not hold '/' or spaces: write a version such as v1.0", v)
	}
	checkCommand := func(field string, c *PluginCommand, required bool) {
		switch {
		case c == nil && !required:
		case c == nil || len(c.Command) == 0:
			add(field+".command", "required: the program to run and its first arguments, e.g. [sh, -c]")
		case c.Command[0] == "":
			add(field+".command[0]", "empty: name the program to run, e.g. sh or /ferry/plugins/bin/tool")
		}
	}
	checkCommand("spec.init", p.Spec.Init, false)
	checkCommand("spec.generate", &p.Spec.Generate, true)
	if d := p.Spec.Discover; d != nil {
		if d.FileName != "" {
			if msg := checkPluginGlob(d.FileName); msg != "" {
				add("spec.discover.fileName", "%q %s", d.FileName, msg)
			}
		}
		if f := d.Find; f != nil {
			if f.Glob != "" {
				if msg := checkPluginGlob(f.Glob); msg != "" {
					add("spec.discover.find.glob", "%q %s", f.Glob, msg)
				}
			}
			if len(f.Args) > 0 && len(f.Command) == 0 {
				add("spec.discover.find.command", "required with find.args: the program to run, e.g. [sh, -c]")
			}
		}
	}
	if ps := p.Spec.Parameters; ps != nil {
		for i, a := range ps.Static {
			field := fmt.Sprintf("spec.parameters.static[%d]", i)
			if a.Name == "" {
				add(field+".name", "required: the parameter's name, as Applications give it")
			}
			switch a.CollectionType {
			case "", "string", "array", "map":
			default:
				add(field+".collectionType", "%q: write string, array or map", a.CollectionType)
			}
		}
		if ps.Dynamic != nil {
			checkCommand("spec.parameters.dynamic", ps.Dynamic, true)
		}
	}
	if p.Spec.ProvideGitCreds {
		add("spec.provideGitCreds", "Ferry never hands a plugin the worker's Git credentials: remove the field; the plugin gets the checkout")
	}
	return &p, errs
}

func checkPluginName(name string) string {
	switch {
	case name == "":
		return "required: the plugin's name, which Applications give in spec.source.plugin.name"
	case strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r <= ' ' }):
		return fmt.Sprintf("%q may not hold '/' or spaces: write a name such as my-plugin", name)
	}
	return ""
}

// checkPluginGlob says what is wrong with a discover pattern: it must be
// a valid glob relative to the app directory.
func checkPluginGlob(pattern string) string {
	clean := path.Clean(filepath.ToSlash(pattern))
	switch {
	case path.IsAbs(clean):
		return "is absolute: write it relative to the app directory, e.g. ./values.yaml or **/Chart.yaml"
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "leaves the app directory: discover looks only inside it"
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Sprintf("is not a valid glob (%v): write it like *.yaml or **/Chart.yaml", err)
		}
	}
	return ""
}

// pickPlugin chooses the plugin of a source, as Argo CD does: the one
// spec.source.plugin.name names (whose discover, when it has one, must
// match), else the first whose discover matches. For a source without a
// plugin section, no match is no plugin (nil, nil).
func (r *Renderer) pickPlugin(ctx context.Context, t *target, src app.Source, opts Options) (*Plugin, string, error) {
	var env []string
	if r.RunPlugins {
		var err error
		if env, err = r.pluginEnv(src, opts); err != nil {
			return nil, "", &SourceError{Path: t.appPath, Msg: err.Error()}
		}
	}
	if src.Plugin == nil || src.Plugin.Name == "" {
		p, err := r.discover(ctx, t.dir, env, r.RunPlugins)
		switch {
		case err != nil:
			return nil, "", &SourceError{Path: t.appPath, Msg: "plugin discovery: " + err.Error(), Err: err}
		case p != nil:
			return p, "plugin " + p.FullName() + "'s discover matches", nil
		case src.Plugin != nil:
			return nil, "", &SourceError{Path: t.appPath, Msg: "spec.source.plugin names no plugin, and no plugin's discover matches the path " +
				"(plugins of this worker: " + r.pluginNames() + "); name one in spec.source.plugin.name"}
		}
		return nil, "", nil
	}
	name := src.Plugin.Name
	for _, p := range r.Plugins {
		if p.FullName() != name {
			continue
		}
		if d := p.Spec.Discover; d != nil && (d.FileName != "" || d.Find != nil && (d.Find.Glob != "" || r.RunPlugins)) {
			ok, err := r.matches(ctx, p, t.dir, env, r.RunPlugins)
			if err != nil {
				return nil, "", &SourceError{Path: t.appPath, Msg: "plugin discovery: " + err.Error(), Err: err}
			}
			if !ok {
				return nil, "", &SourceError{Path: t.appPath, Msg: fmt.Sprintf("spec.source.plugin.name: plugin %s's discover does not match the path; "+
					"point spec.source.path at a directory it renders, or change the plugin's discover", name)}
			}
		}
		return p, "spec.source.plugin names it", nil
	}
	hint := ""
	for _, p := range r.Plugins {
		if p.Metadata.Name == name && p.Spec.Version != "" {
			hint = fmt.Sprintf(" (plugin %s has version %s: write %s)", name, p.Spec.Version, p.FullName())
		}
	}
	return nil, "", &SourceError{Path: t.appPath, Msg: fmt.Sprintf("spec.source.plugin.name: no plugin %q on this worker%s; plugins: %s. "+
		"Add its ConfigManagementPlugin file to the workers' --plugin-dir, or fix the name (<metadata.name>-<spec.version> when it has a version)", name, hint, r.pluginNames())}
}

func (r *Renderer) pluginNames() string {
	if len(r.Plugins) == 0 {
		return "none, no --plugin-dir"
	}
	names := make([]string, len(r.Plugins))
	for i, p := range r.Plugins {
		names[i] = p.FullName()
	}
	return strings.Join(names, ", ")
}
