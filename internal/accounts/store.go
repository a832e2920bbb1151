package accounts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// SigningKeyKey is the key of argocd-secret that holds ferry-server's
// token signing key (PEM), made at the first start.
const SigningKeyKey = "ferry.server.signingkey"

// Store writes the accounts' Secrets of the control namespace. Reads go
// through the caller's informer; writes go to the API server.
type Store struct {
	Client    kubernetes.Interface
	Namespace string
	now       func() time.Time
}

func (s *Store) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// Bootstrap makes what a first start needs in argocd-secret: the signing
// key (made by newKey) and, when the admin account has no password, a
// random one, whose hash goes to argocd-secret and whose text goes to
// argocd-initial-admin-secret (key password), as Argo CD keeps it. It
// returns the signing key. Nothing that is there is replaced.
func (s *Store) Bootstrap(ctx context.Context, newKey func() ([]byte, error)) (signingKey []byte, err error) {
	var initial string
	err = s.update(ctx, func(data map[string][]byte) error {
		if len(data[SigningKeyKey]) == 0 {
			k, err := newKey()
			if err != nil {
				return err
			}
			data[SigningKeyKey] = k
		}
		signingKey = data[SigningKeyKey]
		if len(data["admin.password"]) > 0 {
			initial = ""
			return nil
		}
		initial = randomPassword()
		hash, err := Hash(initial)
		if err != nil {
			return err
		}
		data["admin.password"] = hash
		data["admin.passwordMtime"] = []byte(s.clock().UTC().Format(time.RFC3339))
		return nil
	})
	if err != nil || initial == "" {
		return signingKey, err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: InitialAdminSecretName, Namespace: s.Namespace},
		Data: map[string][]byte{"password": []byte(initial)}}
	_, err = s.Client.CoreV1().Secrets(s.Namespace).Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = s.Client.CoreV1().Secrets(s.Namespace).Update(ctx, sec, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("write secret %s/%s: %w", s.Namespace, InitialAdminSecretName, err)
	}
	return signingKey, nil
}

// SetPassword sets name's password hash and its time, which ends the
// sessions that began before it.
func (s *Store) SetPassword(ctx context.Context, name string, hash []byte) error {
	prefix := "accounts." + name
	if name == Admin {
		prefix = "admin"
	}
	return s.update(ctx, func(data map[string][]byte) error {
		data[prefix+".password"] = hash
		data[prefix+".passwordMtime"] = []byte(s.clock().UTC().Format(time.RFC3339))
		return nil
	})
}

// AddToken records an API key of name.
func (s *Store) AddToken(ctx context.Context, name string, t Token) error {
	key := "accounts." + name + ".tokens"
	return s.update(ctx, func(data map[string][]byte) error {
		var list []Token
		if raw := data[key]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("argocd-secret %s is no JSON list of tokens: fix or remove it first", key)
			}
		}
		b, err := json.Marshal(append(list, t))
		data[key] = b
		return err
	})
}

// update changes argocd-secret's data with fn, creating the Secret when
// there is none, retried on a conflicting write.
func (s *Store) update(ctx context.Context, fn func(map[string][]byte) error) error {
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := secrets.Get(ctx, SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: s.Namespace,
				Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}}
			if err := fn(ensure(sec)); err != nil {
				return err
			}
			_, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("secrets"), SecretName, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		if err := fn(ensure(sec)); err != nil {
			return err
		}
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("write secret %s/%s: %w", s.Namespace, SecretName, err)
	}
	return nil
}

func ensure(sec *corev1.Secret) map[string][]byte {
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	return sec.Data
}

// randomPassword is 16 random characters of base64's URL alphabet.
func randomPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
