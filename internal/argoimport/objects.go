package argoimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// AnnotationShadow marks an imported Application that runs in shadow
// (app.AnnotationShadow): the automated sync policy and the finalizers of
// Argo CD's Application are kept in it, a Shadow as JSON, instead of the
// spec; ferry app takeover puts them back.
const AnnotationShadow = app.AnnotationShadow

// Shadow is what an app (or an ApplicationSet) in shadow keeps aside.
type Shadow struct {
	// From is Argo CD's Application (ApplicationSet), namespace/name, in
	// the cluster it was imported from.
	From string `json:"from,omitempty"`
	// Automated is spec.syncPolicy.automated (of an ApplicationSet: of its
	// template); nil when it had none.
	Automated  any      `json:"automated,omitempty"`
	Finalizers []string `json:"finalizers,omitempty"`
	// AppSet, on an app an imported ApplicationSet generates instead of
	// From, is Argo CD's ApplicationSet, namespace/name: Argo CD's
	// Application of the app's name in that namespace is its peer.
	AppSet string `json:"appSet,omitempty"`
}

// argoApp is Argo CD's Application, namespace/name, whose app of name is
// in shadow as s says.
func (s Shadow) argoApp(name string) string {
	if s.From == "" && s.AppSet != "" {
		ns, _, _ := strings.Cut(s.AppSet, "/")
		return ns + "/" + name
	}
	return s.From
}

// Problem is something of the installation Ferry cannot carry.
type Problem struct {
	Object  string `json:"object"` // "Application argocd/guestbook"
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s: %s", p.Object, p.Field, p.Message) }

type objectRef string

func object(kind string, u unstructured.Unstructured) objectRef {
	return objectRef(fmt.Sprintf("%s %s/%s", kind, u.GetNamespace(), u.GetName()))
}

func (o objectRef) problem(field, message string) Problem {
	return Problem{Object: string(o), Field: field, Message: message}
}

// Plan is what import writes, and what it cannot carry.
type Plan struct {
	Regions *Regions
	// Objects go into the control namespace, in this order: the settings,
	// the repository Secrets, the AppProjects, the ApplicationSets, the
	// Applications.
	Objects []*unstructured.Unstructured
	// Apps and Sets are the Applications and ApplicationSets imported;
	// Generated the Applications left out because an imported set
	// generates them.
	Apps, Sets, Generated int
	Problems              []Problem
}

// MakePlan plans the import of in into the control namespace; home is the
// client config of the cluster Argo CD runs in.
func MakePlan(in *Installation, home *rest.Config, controlNamespace string) *Plan {
	p := &Plan{}
	var problems []Problem
	p.Regions, problems = planRegions(in, home)
	p.Problems = append(p.Problems, problems...)
	rc, _ := regions.New(p.Regions.File.Regions) // its problems are above
	for _, group := range [][]unstructured.Unstructured{in.Settings, in.Repositories} {
		for _, s := range group {
			p.Objects = append(p.Objects, copied(s, controlNamespace))
		}
	}
	for _, u := range in.AppProjects {
		obj := copied(u, controlNamespace)
		p.Problems = append(p.Problems, projectProblems(object("AppProject", u), obj)...)
		p.Objects = append(p.Objects, obj)
	}
	sets := map[string]bool{}
	for _, u := range in.ApplicationSets {
		obj, problems := shadowSet(u, controlNamespace)
		p.Problems = append(p.Problems, problems...)
		p.Objects = append(p.Objects, obj)
		sets[u.GetName()] = true
		p.Sets++
	}
	for _, u := range in.Applications {
		if owner, ok := setOwner(u); ok && sets[owner] {
			p.Generated++ // Ferry's set generates it, in shadow
			continue
		}
		obj, problems := shadowApp(u, controlNamespace, rc)
		p.Problems = append(p.Problems, problems...)
		p.Objects = append(p.Objects, obj)
		p.Apps++
	}
	return p
}

// copied is u as an object of the control namespace: its kind, name,
// labels, annotations and content, without what the API server wrote.
func copied(u unstructured.Unstructured, namespace string) *unstructured.Unstructured {
	obj := runtime.DeepCopyJSON(u.Object)
	delete(obj, "status")
	md := map[string]any{"name": u.GetName(), "namespace": namespace}
	if l := u.GetLabels(); len(l) > 0 {
		md["labels"] = toAny(l)
	}
	if a := without(u.GetAnnotations(), "kubectl.kubernetes.io/last-applied-configuration"); len(a) > 0 {
		md["annotations"] = toAny(a)
	}
	obj["metadata"] = md
	return &unstructured.Unstructured{Object: obj}
}

// shadowApp is Argo CD's Application u as a Ferry app in shadow, and what
// of it Ferry cannot carry: the fields its validation refuses, and an
// owner (an ApplicationSet).
func shadowApp(u unstructured.Unstructured, namespace string, rc *regions.Config) (*unstructured.Unstructured, []Problem) {
	ref := object("Application", u)
	var problems []Problem
	for _, o := range u.GetOwnerReferences() {
		problems = append(problems, ref.problem("metadata.ownerReferences",
			fmt.Sprintf("owned by %s %s, which import does not carry: import it once its owner can be", o.Kind, o.Name)))
	}
	obj := copied(u, namespace)
	delete(obj.Object, "operation")
	shadow := Shadow{From: u.GetNamespace() + "/" + u.GetName(), Finalizers: u.GetFinalizers()}
	if automated, found, _ := unstructured.NestedFieldCopy(obj.Object, "spec", "syncPolicy", "automated"); found {
		shadow.Automated = automated
		unstructured.RemoveNestedField(obj.Object, "spec", "syncPolicy", "automated")
	}
	mark, _ := json.Marshal(shadow) // plain JSON values: always encode
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationShadow] = string(mark)
	obj.SetAnnotations(annotations)
	if _, err := appobjects.Read(obj, app.ValidateOptions{Regions: rc}); err != nil {
		problems = append(problems, fieldProblems(ref, err)...)
	}
	return obj, problems
}

func projectProblems(ref objectRef, obj *unstructured.Unstructured) []Problem {
	data, err := json.Marshal(obj.Object)
	if err == nil {
		_, err = app.ParseProject(data)
	}
	if err == nil {
		return nil
	}
	return fieldProblems(ref, err)
}

// fieldProblems is a validation error as one Problem per field.
func fieldProblems(ref objectRef, err error) []Problem {
	var ve *app.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{ref.problem("", err.Error())}
	}
	var out []Problem
	for _, fe := range ve.Errors {
		out = append(out, ref.problem(fe.Field, fe.Message))
	}
	return out
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
