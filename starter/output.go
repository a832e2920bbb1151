package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// printStructured writes v as indented JSON or as YAML when output asks for
// one. done is false for the default output (""), which the caller prints
// as tables.
func printStructured(out io.Writer, v any, output string) (done bool, err error) {
	switch output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return true, enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = out.Write(data)
		return true, err
	case "":
		return false, nil
	}
	return true, fmt.Errorf("unknown output format %q: use json or yaml", output)
}
