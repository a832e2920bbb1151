package kube

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ferry-gitops/ferry/internal/app"
)

var webKey = app.ResourceKey{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}

func invalidStatus(kind, name, fieldPath, value string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, field.ErrorList{
		field.Invalid(field.NewPath(fieldPath), value, "must be valid"),
	})
}

func TestObjectErrorMessage(t *testing.T) {
	err := objectErrors([]*ObjectError{newObjectError(webKey, "apply", errors.New("boom"))})
	assert.EqualError(t, err, "Deployment/shop/web: apply: boom")

	ns := app.ResourceKey{Version: "v1", Kind: "Namespace", Name: "shop"}
	err = objectErrors([]*ObjectError{
		newObjectError(webKey, "apply", errors.New("boom")),
		newObjectError(ns, "apply", errors.New("bang")),
	})
	assert.EqualError(t, err, "2 objects failed: Deployment/shop/web: apply: boom; Namespace/shop: apply: bang")
	assert.NoError(t, objectErrors(nil))
}

func TestIsInvalid(t *testing.T) {
	invalid := newObjectError(webKey, "apply", invalidStatus("Deployment", "web", "spec.replicas", "-1"))
	badRequest := newObjectError(webKey, "apply", apierrors.NewBadRequest("strict decoding error"))
	transient := newObjectError(webKey, "apply", apierrors.NewServerTimeout(schema.GroupResource{Resource: "deployments"}, "apply", 1))

	assert.True(t, IsInvalid(objectErrors([]*ObjectError{invalid})))
	assert.True(t, IsInvalid(objectErrors([]*ObjectError{invalid, badRequest})))
	assert.False(t, IsInvalid(objectErrors([]*ObjectError{invalid, transient})), "a transient failure keeps it retryable")
	assert.True(t, IsInvalid(fmt.Errorf("sync: %w", objectErrors([]*ObjectError{invalid}))))
	assert.True(t, IsInvalid(invalidf("bad name")))
	assert.False(t, IsInvalid(nil))
	assert.False(t, IsInvalid(errors.New("connection refused")))
	assert.False(t, IsInvalid(&ObjectErrors{}))
	unknownField := apierrors.NewInternalError(errors.New("failed to create typed patch object (shop/web; apps/v1, Kind=Deployment): .spec.typo: field not declared in schema"))
	assert.True(t, IsInvalid(newObjectError(app.ResourceKey{Kind: "Secret", Name: "s"}, "apply", unknownField)), "also through a Secret's redaction")
	wrongType := apierrors.NewInternalError(errors.New("failed to create typed patch object (shop/settings; /v1, Kind=ConfigMap): .data.version: expected string, got &value.valueUnstructured{Value:1}"))
	assert.True(t, IsInvalid(newObjectError(app.ResourceKey{Kind: "ConfigMap", Name: "settings"}, "apply", wrongType)), "a value of the wrong type")
	assert.False(t, IsInvalid(apierrors.NewInternalError(errors.New("etcd timeout"))))
	assert.True(t, IsInvalid(&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "nope.example.com", Kind: "Gizmo"}}))
}

func TestIsImmutable(t *testing.T) {
	immutable := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "selector"), "x", "field is immutable"),
	})
	assert.True(t, IsImmutable(newObjectError(webKey, "apply", immutable)))
	assert.False(t, IsImmutable(invalidStatus("Deployment", "web", "spec.replicas", "-1")))
	assert.False(t, IsImmutable(errors.New("field is immutable")), "only the API server's verdict counts")
}

func TestSecretErrorsAreRedacted(t *testing.T) {
	key := app.ResourceKey{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "creds"}
	cause := invalidStatus("Secret", "creds", "data[token]", "hunter2")
	assert.Contains(t, cause.Error(), "hunter2", "the server's text quotes the value")

	err := objectErrors([]*ObjectError{newObjectError(key, "apply", cause)})
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Contains(t, err.Error(), "Secret/shop/creds: apply: Invalid (422): data[token] FieldValueInvalid")
	assert.True(t, IsInvalid(err), "redaction keeps the status for the predicates")
	assert.True(t, apierrors.IsInvalid(errors.Unwrap(err.(*ObjectErrors).Errs[0])))

	plain := newObjectError(key, "apply", errors.New("token hunter2 rejected"))
	assert.NotContains(t, plain.Error(), "hunter2")
}
