package appobjects

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// Update makes the spec, labels and annotations of the Application object
// name of objects those of doc (an Application as JSON), as argocd's
// update of an app does; the object's other fields stay. The worker
// writes the object's status meanwhile: a conflict is tried again on the
// object as it is then. fieldManager names the writer.
func Update(ctx context.Context, objects dynamic.ResourceInterface, name string, doc []byte, fieldManager string) error {
	var in struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(doc, &in); err != nil {
		return fmt.Errorf("update Application object %s: %w", name, err)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := objects.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		u.Object["spec"] = in.Spec
		u.SetLabels(in.Metadata.Labels)
		u.SetAnnotations(in.Metadata.Annotations)
		if _, err := objects.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("update Application object %s: %w", Key(u.GetNamespace(), name), err)
		}
		return nil
	})
}
