package regions

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// File is the regions configuration file's content.
type File struct {
	// Regions are the regions, in the order Names lists them.
	Regions []Region `json:"regions"`
}

// Load reads the regions configuration file at path (see the package doc).
func Load(path string) (*Config, error) { return Configure(path, nil, "") }

// Parse reads a regions configuration (YAML or JSON); unknown fields are
// errors, so that a misspelt one is not silently dropped.
func Parse(data []byte) (*Config, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("regions configuration: %w", err)
	}
	return fromFile(f)
}

func fromFile(f File) (*Config, error) {
	if len(f.Regions) == 0 {
		return nil, fmt.Errorf("regions configuration: lists no regions: write regions: [{name: us-east-1, server: https://…}, …]")
	}
	return New(f.Regions)
}

// Marshal is the configuration file that Load reads back as these regions.
func (f File) Marshal() ([]byte, error) { return yaml.Marshal(f) }

// Configure is the Config of the workers' (and the CLI's) settings: the
// configuration file when one is given, else the shorthand flags (FromFlags).
// With a file, known regions, when given, must be the file's, and
// inCluster, when given, must be the file's in-cluster region or name the
// one to mark so.
func Configure(file string, known []string, inCluster string) (*Config, error) {
	if file == "" {
		return FromFlags(known, inCluster)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read regions configuration: %w", err)
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: regions configuration: %w", file, err)
	}
	if inCluster != "" {
		found := false
		for i, r := range f.Regions {
			if r.InCluster && r.Name != inCluster {
				return nil, fmt.Errorf("%s makes %s the in-cluster region, but the in-cluster region given is %s: give one of them", file, r.Name, inCluster)
			}
			if r.Name == inCluster {
				f.Regions[i].InCluster, found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("the in-cluster region %s is not a region of %s", inCluster, file)
		}
	}
	c, err := fromFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(known) > 0 {
		names := c.Names()
		if missing, extra := diff(names, known), diff(known, names); len(missing)+len(extra) > 0 {
			return nil, fmt.Errorf("the regions given (%s) are not those of %s (%s): give the same, or only the file",
				strings.Join(known, ","), file, strings.Join(names, ","))
		}
	}
	return c, nil
}

// diff is what of a is not in b.
func diff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
