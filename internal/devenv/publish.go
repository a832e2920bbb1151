package devenv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
)

// PublishTarget says where PublishChart puts a chart: the directory the
// stack's Helm repository serves, and the stack's OCI registry.
type PublishTarget struct {
	// HelmDir is DIR/helm of a stack; empty skips the Helm repository.
	HelmDir string
	// OCIRegistry is the registry's host:port; empty skips it.
	OCIRegistry string
	// OCIPath is the path under the registry the chart's repository goes
	// in, e.g. team/charts; empty means "charts".
	OCIPath string
}

// Published says what PublishChart made.
type Published struct {
	Name, Version string
	// Digest is the archive's "sha256:<hex>", as index.yaml lists it.
	Digest string
	// Archive is the packaged chart in HelmDir.
	Archive string
	// OCIRef is "oci://host:port/charts/<name>" and OCIDigest the
	// manifest's digest there; empty without a registry.
	OCIRef, OCIDigest string
}

// PublishTarget is where this stack's charts go.
func (s *Stack) PublishTarget() PublishTarget {
	return PublishTarget{HelmDir: s.helm.dir, OCIRegistry: s.OCIRegistry}
}

// PublishChart packages the chart in dir with the Helm SDK, as helm
// package does (its charts/ included), and publishes it to the stack.
func (s *Stack) PublishChart(ctx context.Context, dir string) (*Published, error) {
	return PublishChart(ctx, dir, s.PublishTarget())
}

// PublishChart packages the chart directory dir as helm package does and
// publishes the archive: into t.HelmDir, regenerating its index.yaml as
// helm repo index does, and to t.OCIRegistry as
// oci://HOST/charts/<name>:<version> (t.OCIPath for charts), as helm push
// does. Publishing a
// version again replaces it.
func PublishChart(ctx context.Context, dir string, t PublishTarget) (*Published, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("publish chart %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "ferry-chart-")
	if err != nil {
		return nil, fmt.Errorf("publish chart %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	archive, err := chartutil.Save(ch, tmp)
	if err != nil {
		return nil, fmt.Errorf("publish chart %s: package it: %w", dir, err)
	}
	digest, err := provenance.DigestFile(archive)
	if err != nil {
		return nil, fmt.Errorf("publish chart %s: %w", dir, err)
	}
	out := &Published{Name: ch.Name(), Version: ch.Metadata.Version, Digest: "sha256:" + digest}
	if t.HelmDir != "" {
		if out.Archive, err = publishToDir(archive, t.HelmDir); err != nil {
			return nil, fmt.Errorf("publish chart %s to %s: %w", dir, t.HelmDir, err)
		}
	}
	if t.OCIRegistry != "" {
		data, err := os.ReadFile(archive)
		if err != nil {
			return nil, err
		}
		client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(tmp, "no-credentials.json")))
		if err != nil {
			return nil, fmt.Errorf("publish chart %s: registry client: %w", dir, err)
		}
		base := t.OCIRegistry + "/" + cmp.Or(strings.Trim(t.OCIPath, "/"), "charts")
		ref := fmt.Sprintf("%s/%s:%s", base, out.Name, out.Version)
		res, err := client.Push(data, ref)
		if err != nil {
			return nil, fmt.Errorf("publish chart %s: push to oci://%s: %w", dir, ref, err)
		}
		out.OCIRef = "oci://" + base + "/" + out.Name
		out.OCIDigest = res.Manifest.Digest
	}
	return out, ctx.Err()
}

// publishToDir moves the archive into the repository directory and
// writes its index.yaml again, one publisher at a time.
func publishToDir(archive, helmDir string) (string, error) {
	if err := os.MkdirAll(helmDir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(helmDir, ".publish.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	dest := filepath.Join(helmDir, filepath.Base(archive))
	data, err := os.ReadFile(archive)
	if err != nil {
		return "", err
	}
	part := dest + ".part"
	if err := os.WriteFile(part, data, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(part, dest); err != nil {
		return "", err
	}
	index, err := repo.IndexDirectory(helmDir, "")
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(helmDir, HelmIndexFile), 0o644); err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	return dest, nil
}

// ensureIndex writes an empty index.yaml into a new repository directory,
// so that a client adding the repository before any publish finds one.
func ensureIndex(dir string) error {
	p := filepath.Join(dir, HelmIndexFile)
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return repo.NewIndexFile().WriteFile(p, 0o644)
}

// TargetOfStateDir is the PublishTarget of the stack running on stateDir:
// its DIR/helm, and the registry its DIR/env names.
func TargetOfStateDir(stateDir string) (PublishTarget, error) {
	envPath := filepath.Join(stateDir, "env")
	env, err := ReadEnvFile(envPath)
	if err != nil {
		return PublishTarget{}, fmt.Errorf("%w: is `ferry dev up --state-dir %s` running?", err, stateDir)
	}
	t := PublishTarget{HelmDir: filepath.Join(stateDir, "helm"), OCIRegistry: env["FERRY_OCI_REGISTRY"]}
	if env["FERRY_HELM_REPO_URL"] == "" || t.OCIRegistry == "" {
		return t, fmt.Errorf("%s names no FERRY_HELM_REPO_URL or FERRY_OCI_REGISTRY: restart `ferry dev up` with this version of ferry", envPath)
	}
	return t, nil
}

// ReadEnvFile reads the variables of a file that EnvFile wrote.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(rest, "=")
		if !ok || !strings.HasPrefix(v, "'") || !strings.HasSuffix(v, "'") || len(v) < 2 {
			continue // PATH, which names "$PATH"
		}
		out[k] = strings.ReplaceAll(v[1:len(v)-1], `'\''`, "'")
	}
	return out, nil
}
