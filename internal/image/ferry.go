package image

import (
	"fmt"
	"os"
	"path/filepath"
)

// Ferry's image: where its parts are.
const (
	// BinDir holds ferry-worker, ferry and ferry-render.
	BinDir = "/usr/local/bin"
	// UID and GID are the user the image runs as (the deploy/ pods' too).
	UID = 65532
	GID = 65532
	// CAFile is where Go's crypto/x509 looks for the system roots first
	// (Git hosts, Temporal Cloud).
	CAFile = "/etc/ssl/certs/ca-certificates.crt"
)

// Binaries are the programs of the image, all in BinDir.
var Binaries = []string{"ferry-worker", "ferry", "ferry-render", "ferry-server"}

// FerrySpec is Ferry's image: Binaries from binDir (static: CGO_ENABLED=0),
// the system roots from caFile, a passwd and group naming the non-root
// user, and /tmp; no shell, no package manager. arch is the binaries'
// GOARCH.
func FerrySpec(binDir, caFile, arch string) (Spec, error) {
	spec := Spec{
		User:       fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint: []string{BinDir + "/ferry-worker"},
		Env:        []string{"PATH=" + BinDir, "HOME=/home/nonroot"},
		Arch:       arch,
		Dirs:       []Dir{{Path: "/tmp", Mode: 0o1777}, {Path: "/home/nonroot", Mode: 0o755}},
		Files: []File{
			{Path: "/etc/passwd", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID)},
			{Path: "/etc/group", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", GID)},
		},
	}
	for _, b := range Binaries {
		src := filepath.Join(binDir, b)
		info, err := os.Stat(src)
		if err != nil {
			return Spec{}, fmt.Errorf("image: %s: %w; build the binaries first (make image does: CGO_ENABLED=0 go build -trimpath)", b, err)
		}
		if !info.Mode().IsRegular() {
			return Spec{}, fmt.Errorf("image: %s is not a regular file", src)
		}
		spec.Files = append(spec.Files, File{Path: BinDir + "/" + b, Source: src, Mode: 0o755})
	}
	if caFile != "" {
		spec.Files = append(spec.Files, File{Path: CAFile, Source: caFile, Mode: 0o644})
	}
	return spec, nil
}
