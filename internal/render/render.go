package render

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/defaults"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// Source types, named as Argo CD names them in an Application's status.
const (
	SourceTypeDirectory = "Directory"
	SourceTypeKustomize = "Kustomize"
	SourceTypeHelm      = "Helm"
)

// Result is what rendering a source gives.
type Result struct {
	// Objects in a deterministic order: for a directory by file path, then
	// document order; for Kustomize in kustomize's output order; for Helm
	// CRDs first, then by template path and document order.
	Objects    []*unstructured.Unstructured
	SourceType string
}

// Options are what a render needs besides the checkout and the source: the
// parts of the Application that Helm templates, and Jsonnet variables
// naming the build environment, can see. Other sources ignore them, which
// lets every Application on a path share one rendered set (see PerApp).
type Options struct {
	// AppName is the app's name ("web", or "team-a/web" for an app in
	// another namespace). Without the namespace it is the Helm release name
	// when spec.source.helm.releaseName is empty, as in Argo CD;
	// $ARGOCD_APP_NAME is its app.InstanceName.
	AppName string
	// Namespace is the destination namespace: Helm's .Release.Namespace
	// unless spec.source.helm.namespace sets it. Empty means "default", as
	// for helm template.
	Namespace string
	// Revision is the commit SHA rendered: $ARGOCD_APP_REVISION in the
	// build environment (see BuildEnv).
	Revision string
	// RemoteBases are the remote Kustomize bases the worker fetched for
	// the source (FetchRemoteBases); a Kustomize render reads them from
	// there, and refuses a remote base that is not among them.
	RemoteBases []RemoteBase `json:"remoteBases,omitempty"`
	// RefFiles are the Helm value files of the app's other sources
	// ($ref/path in helm.valueFiles) the worker read for the render
	// (ReadRefFiles), and those given as http(s) URLs, which it fetched,
	// keyed by the valueFiles entry; one that is not there does not exist
	// at the ref's revision.
	RefFiles map[string]string `json:"refFiles,omitempty"`
}

// Limits bound what one render reads and how long it runs, so that a
// repository cannot exhaust a worker. A zero field takes its default.
type Limits struct {
	// MaxFiles is how many files one render may meet: the walk of a
	// directory source, the files of a chart and its subcharts. Default
	// 10,000.
	MaxFiles int
	// MaxFileBytes is the largest manifest, chart or values file read.
	// Default 10 MiB.
	MaxFileBytes int64
	// MaxTotalBytes is the most bytes read in all. Default 100 MiB.
	MaxTotalBytes int64
	// Timeout bounds one Kustomize or Helm render, chart loading
	// included (a directory is bounded by its size). Default 90 s, Argo
	// CD's default for its tools.
	Timeout time.Duration
	// MaxObjects is how many objects one source may render. Every object
	// costs a few hundred bytes in the status and compare results the
	// workflow carries, and Temporal refuses a payload over 2 MB (about
	// 6,000 objects in one region); the default, 2,000, stays at a third
	// of that.
	MaxObjects int
	// MaxRenderedBytes bounds the rendered objects of one source, counted
	// as their JSON encoding: what the manifest cache holds. Default
	// 32 MiB.
	MaxRenderedBytes int64
	// MaxArchiveBytes bounds what a chart's archived subcharts
	// (charts/*.tgz) inflate to, all archives of one render together,
	// checked before Helm's loader inflates them; each file in them
	// counts against MaxFiles too. Default 32 MiB.
	MaxArchiveBytes int64
	// Flags name the worker settings that raise these limits, for the
	// errors that report them; empty names none.
	Flags LimitFlags
}

// LimitFlags name the settings that raise Limits, e.g.
// "--render-max-objects", so that an error can say what to change.
type LimitFlags struct {
	Timeout       string `json:",omitempty"`
	Objects       string `json:",omitempty"`
	RenderedBytes string `json:",omitempty"`
	ArchiveBytes  string `json:",omitempty"`
}

// DefaultLimits returns the limits used by the package-level functions.
func DefaultLimits() Limits {
	return Limits{MaxFiles: 10_000, MaxFileBytes: 10 << 20, MaxTotalBytes: 100 << 20, Timeout: 90 * time.Second,
		MaxObjects: 2_000, MaxRenderedBytes: 32 << 20, MaxArchiveBytes: 32 << 20}
}

func (l Limits) withDefaults() Limits {
	return defaults.Positive(l, DefaultLimits())
}

// Renderer renders Application sources. The zero value is ready to use:
// default limits, Helm capabilities of a v1.37.2 cluster, no remote
// Kustomize bases. A Renderer is safe for concurrent use.
type Renderer struct {
	// Limits bound every render.
	Limits Limits
	// Capabilities describe the target clusters to Helm templates. The
	// control worker renders once for every region, so this is the
	// operator's statement of what the regions run; an Application can
	// override it with spec.source.helm.kubeVersion and apiVersions.
	Capabilities Capabilities
	// AllowRemoteBases lets kustomizations name bases in other Git
	// repositories, which the worker fetches before the render
	// (FetchRemoteBases). Off by default: a render then reads nothing but
	// the checkout. Files given as HTTP URLs stay refused either way.
	AllowRemoteBases bool
	// Kustomize are the build options of argocd-cm's
	// kustomize.buildOptions that Ferry takes (ParseKustomizeBuildOptions).
	Kustomize KustomizeOptions
	// Plugins are the config-management plugins of the worker's
	// --plugin-dir, sorted by FullName (LoadPlugins). Their names and
	// digests are part of Version.
	Plugins []*Plugin
	// RunPlugins lets Render run plugins' commands: set only where the
	// renderer itself runs in a sandbox (sandbox.Serve). Without it a
	// plugin source is refused, and discovery by find.command is skipped.
	RunPlugins bool
	// EgressSocket, when set, is the socket of the worker's egress proxy
	// for this render's plugin (package egress), inside the sandbox: the
	// plugin's commands reach it through a relay on the sandbox's
	// loopback, named in HTTPS_PROXY and HTTP_PROXY (PluginEgress).
	EgressSocket string
	// SOPS are the age identities SOPS-encrypted files are decrypted
	// with (sops.go); nil: an encrypted file is an error that says the
	// worker has none.
	SOPS *sopsfile.Keys
	// Files, when set, is the checkout in memory: Render reads the root
	// it is given (Files.Root) from it, and renders only directory
	// sources. See Files.
	Files *Files
}

var defaultRenderer Renderer

// Render renders src from the checked-out repository at root with the zero
// Renderer. See Renderer.Render.
func Render(ctx context.Context, root string, src app.Source, opts Options) (*Result, error) {
	return defaultRenderer.Render(ctx, root, src, opts)
}

// Directory renders a plain directory with default limits. See
// Renderer.Directory.
func Directory(root, path string, opts *app.DirectorySource) ([]*unstructured.Unstructured, error) {
	return defaultRenderer.Directory(root, path, opts)
}

// Render renders src.Path of the repository checked out at root. The
// source type is chosen as SourceType says; then a directory renders its
// manifest files, a Kustomize source runs kustomize build with
// spec.source.kustomize applied, a Helm source runs helm template with
// spec.source.helm applied.
//
// Nothing outside root is read (see the package documentation), root is
// never written to, and the same tree, source, options and Renderer give
// the same objects. Whatever the source type, a render that gives more
// objects or bytes than Limits allow is a *LimitError.
//
// No error shows a secret value the render met: see maskError.
func (r *Renderer) Render(ctx context.Context, root string, src app.Source, opts Options) (*Result, error) {
	res, t, err := r.render(ctx, root, src, opts)
	if err != nil {
		return nil, maskError(r.secretValues(root, src, opts, t), err)
	}
	return res, nil
}

// render is Render, its errors unmasked, with the target it rendered
// (nil when the path did not resolve).
func (r *Renderer) render(ctx context.Context, root string, src app.Source, opts Options) (*Result, *target, error) {
	t, err := r.detect(ctx, root, src, opts)
	if err != nil {
		return nil, t, err
	}
	if r.Files != nil && t.typ != SourceTypeDirectory {
		return nil, t, fmt.Errorf("render %s: a %s source is not rendered from a checkout in memory: write it out (Files.WriteTo)", t.appPath, t.typ)
	}
	var objs []*unstructured.Unstructured
	switch t.typ {
	case SourceTypeKustomize:
		objs, err = r.kustomize(ctx, t, src.Kustomize, BuildEnv(src, opts), opts.RemoteBases)
	case SourceTypeHelm:
		objs, err = r.helm(ctx, t, src.Helm, opts, BuildEnv(src, opts))
	case SourceTypePlugin:
		objs, err = r.plugin(ctx, t, src, opts)
	default:
		objs, err = r.directory(ctx, root, src, opts)
	}
	if err != nil {
		return nil, t, err
	}
	if err := checkOutput(r.Limits.withDefaults(), t.appPath, objs); err != nil {
		return nil, t, err
	}
	return &Result{Objects: objs, SourceType: t.typ}, t, nil
}
