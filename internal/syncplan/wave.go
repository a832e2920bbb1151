package syncplan

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// WaveOf returns obj's sync wave: its argocd.argoproj.io/sync-wave
// annotation, 0 without one. A value that is not an integer is an error
// (Argo CD quietly reads it as 0, which puts the object in a wave its
// author did not mean).
func WaveOf(obj *unstructured.Unstructured) (int, error) {
	v, ok := obj.GetAnnotations()[app.AnnotationSyncWave]
	if !ok {
		return 0, nil
	}
	w, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %q is not an integer: write a wave number such as \"-1\" or \"2\"", app.AnnotationSyncWave, v)
	}
	return w, nil
}
