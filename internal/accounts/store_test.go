package accounts

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestBootstrapMakesTheAdminsFirstPassword(t *testing.T) {
	ctx := context.Background()
	kc := fake.NewClientset()
	s := &Store{Client: kc, Namespace: "argocd"}
	key, err := s.Bootstrap(ctx, func() ([]byte, error) { return []byte("KEY"), nil })
	require.NoError(t, err)
	assert.Equal(t, "KEY", string(key))
	initial, err := kc.CoreV1().Secrets("argocd").Get(ctx, InitialAdminSecretName, metav1.GetOptions{})
	require.NoError(t, err)
	sec, err := kc.CoreV1().Secrets("argocd").Get(ctx, SecretName, metav1.GetOptions{})
	require.NoError(t, err)
	accts, _ := Read(nil, sec.Data)
	require.NoError(t, Login(accts, Admin, string(initial.Data["password"])))

	again, err := s.Bootstrap(ctx, func() ([]byte, error) { return []byte("OTHER"), nil })
	require.NoError(t, err)
	assert.Equal(t, "KEY", string(again), "a second start keeps the key")
	sec2, err := kc.CoreV1().Secrets("argocd").Get(ctx, SecretName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, sec.Data["admin.password"], sec2.Data["admin.password"], "and the password")
}
