package app

import (
	"fmt"
	"path/filepath"
	"strings"
)

// helmFileParameters checks spec.source.helm.fileParameters: a value path
// and a file inside the repository each.
func (v *validator) helmFileParameters(h *HelmSource) {
	for i, fp := range h.FileParameters {
		p := fmt.Sprintf("spec.source.helm.fileParameters[%d]", i)
		if strings.TrimSpace(fp.Name) == "" {
			v.add(p+".name", "required: the value's path, e.g. config.file")
		}
		switch {
		case strings.TrimSpace(fp.Path) == "":
			v.add(p+".path", "required: the file, relative to spec.source.path")
		case filepath.IsAbs(fp.Path) || strings.HasPrefix(fp.Path, "/"):
			v.add(p+".path", "%q is absolute: write it relative to spec.source.path", fp.Path)
		case strings.Contains(fp.Path, "://"):
			v.add(p+".path", "%q is a URL: Ferry reads value files from the repository only", fp.Path)
		}
	}
}
