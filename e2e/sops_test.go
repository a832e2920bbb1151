package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// TestSOPSSecretSyncs: an app whose Git holds a Secret encrypted with
// SOPS for an age recipient syncs the Secret decrypted into every region,
// the worker holding the identity (--sops-age-key-file); the value in
// clear is nowhere else a user or an operator looks: not in the Redis
// manifest cache, the workflow's history, `ferry app get -o json`, or the
// worker's log, and neither is the private key. A file encrypted for
// another recipient fails its render naming the file and the recipient.
func TestSOPSSecretSyncs(t *testing.T) {
	const plaintext = "ferry-sops-plaintext-4b1e0d"
	id, rcpt, err := sopsfile.NewIdentity()
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(keyFile, []byte("# public key: "+rcpt+"\n"+id+"\n"), 0o600))
	_, strangerRcpt, err := sopsfile.NewIdentity()
	require.NoError(t, err)

	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: " + plaintext + "\n"
	encrypt := func(recipient string) string {
		enc, err := sopsfile.Encrypt([]byte(secret), sopsfile.YAML,
			sopsfile.EncryptOptions{Recipients: []string{recipient}, EncryptedRegex: "^(data|stringData)$"})
		require.NoError(t, err)
		return string(enc)
	}
	repo := newRepo(t, "sops")
	repo.write(map[string]string{
		"app/secret.yaml":      encrypt(rcpt),
		"app/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: prod\n",
		"stranger/secret.yaml": encrypt(strangerRcpt),
	})
	sha := repo.commitAndPush("secrets encrypted with sops")

	w := startWorker(t, "--sops-age-key-file", keyFile)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("sops", repo.URL, "app", "sops", true, "3m")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("sops-stranger", repo.URL, "stranger", "sops-stranger", true, "3m")))
	waitApp(t, "sops", sha, 3*time.Minute)

	ctx := context.Background()
	for _, r := range regions {
		s, err := kubeClient(t, r).CoreV1().Secrets("sops").Get(ctx, "db", metav1.GetOptions{})
		require.NoError(t, err, "region %s", r)
		require.Equal(t, plaintext, string(s.Data["password"]), "region %s: the Secret decrypted", r)
		_, hasSOPS := s.Annotations["sops"]
		require.False(t, hasSOPS)
	}

	// The app whose file no identity of the worker opens.
	c := temporalClient(t)
	eventually(t, 2*time.Minute, "sops-stranger's render error", func() (bool, string) {
		v, err := queryView(t, c, "sops-stranger")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if strings.Contains(cond.Message, "render stranger/secret.yaml: SOPS: no age identity") {
				require.Contains(t, cond.Message, strangerRcpt, "the error names the file's recipient")
				require.NotContains(t, cond.Message, plaintext)
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", v.Status.Conditions)
	})

	forbidden := []string{plaintext, base64.StdEncoding.EncodeToString([]byte(plaintext)), id, "AGE-SECRET-KEY-"}
	assertAbsent := func(what, text string) {
		t.Helper()
		for _, f := range forbidden {
			require.NotContains(t, text, f, "%s shows a value in clear or the private key", what)
		}
	}
	for _, name := range []string{"sops", "sops-stranger"} {
		assertAbsent("ferry app get "+name, mustFerry(t, "app", "get", name, "-o", "json"))
		for runID, h := range histories(t, c, name) {
			assertAbsent("the history of "+name+" run "+runID, string(h))
		}
	}
	entries := redisValues(t)
	require.NotEmpty(t, entries, "the worker's manifest cache is in Redis")
	for key, v := range entries {
		assertAbsent("Redis key "+key, v)
	}
	log, err := os.ReadFile(w.Log)
	require.NoError(t, err)
	require.Contains(t, string(log), rcpt, "the worker logs the recipients it holds identities for")
	assertAbsent("the worker's log", string(log))

	mustFerry(t, "app", "delete", "sops", "--cascade")
	mustFerry(t, "app", "delete", "sops-stranger", "--cascade")
}

// redisValues reads every value of the stack's Redis, by key.
func redisValues(t *testing.T) map[string]string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: stack.RedisAddr, DisableIdentity: true})
	defer rdb.Close()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	out := map[string]string{}
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		var v string
		switch typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			var m map[string]string
			m, err = rdb.HGetAll(ctx, k).Result()
			v = fmt.Sprint(m)
		case "list":
			var l []string
			l, err = rdb.LRange(ctx, k, 0, -1).Result()
			v = strings.Join(l, "\n")
		case "set":
			var l []string
			l, err = rdb.SMembers(ctx, k).Result()
			v = strings.Join(l, "\n")
		case "zset":
			var l []string
			l, err = rdb.ZRange(ctx, k, 0, -1).Result()
			v = strings.Join(l, "\n")
		case "none":
			continue // expired since the listing
		default:
			t.Fatalf("Redis key %s is a %s, which the test does not read", k, typ)
		}
		if err == redis.Nil {
			continue
		}
		require.NoError(t, err, "Redis key %s", k)
		out[k] = v
	}
	return out
}
