// Command image builds Ferry's container image from the static binaries
// that make build writes, pushes it to an OCI registry and prints its
// reference by digest (make image; deploy/README.md):
//
//	go run ./hack/image -bin bin -registry 127.0.0.1:5000
//
// Without -registry it pushes to the registry of a running `ferry dev up`
// (FERRY_OCI_REGISTRY in -state-dir's env). -pin writes the digest into a
// kustomization's images: (deploy/overlays/example).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/image"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "`DIR` holding ferry-worker, ferry and ferry-render, built with CGO_ENABLED=0")
	registry := fs.String("registry", "", "the registry's `HOST:PORT` (default: FERRY_OCI_REGISTRY of -state-dir's env)")
	stateDir := fs.String("state-dir", "", "`DIR` of a running ferry dev up, whose env names its registry")
	repo := fs.String("repository", "ferry/ferry-worker", "the image's repository in the registry")
	tag := fs.String("tag", "dev", "the tag pushed")
	ca := fs.String("ca-file", "/etc/ssl/certs/ca-certificates.crt", "the system roots put in the image (empty: none)")
	var pins []string
	fs.Func("pin", "a kustomization `FILE` whose images: entry ferry-worker gets the image's digest (repeatable)", func(v string) error {
		pins = append(pins, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *registry == "" {
		if *stateDir == "" {
			return fmt.Errorf("no registry: give -registry HOST:PORT, or -state-dir DIR of a running ferry dev up")
		}
		path := filepath.Join(*stateDir, "env")
		env, err := devenv.ReadEnvFile(path)
		if err != nil || env["FERRY_OCI_REGISTRY"] == "" {
			return fmt.Errorf("no registry in %s (FERRY_OCI_REGISTRY): start `ferry dev up`, or give -registry HOST:PORT", path)
		}
		*registry = env["FERRY_OCI_REGISTRY"]
	}
	spec, err := image.FerrySpec(*bin, *ca, runtime.GOARCH)
	if err != nil {
		return err
	}
	img, err := image.Build(spec)
	if err != nil {
		return err
	}
	ref := strings.TrimSuffix(*registry, "/") + "/" + *repo
	digest, err := image.Push(context.Background(), img, ref+":"+*tag)
	if err != nil {
		return err
	}
	for _, k := range pins {
		if err := image.PinDigest(k, "ferry-worker", digest.String()); err != nil {
			return err
		}
	}
	fmt.Println(ref + "@" + digest.String())
	return nil
}
