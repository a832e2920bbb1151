package regions

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkName is "" for a well-formed region name, else what is wrong.
func checkName(name string) string {
	if name == "" {
		return "required: the region's name"
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Sprintf("%q is not a valid region name: %s", name, strings.Join(errs, "; "))
	}
	return ""
}

// checkProject is "" for a well-formed AppProject name, else what is
// wrong: a DNS subdomain, as a project's metadata.name.
func checkProject(name string) string {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("%q is not a valid AppProject name: %s: write the metadata.name of the project the region belongs to, or leave project out", name, strings.Join(errs, "; "))
	}
	return ""
}

func checkKey(k string) string {
	return strings.Join(validation.IsQualifiedName(k), "; ")
}

func checkLabel(k, v string) string {
	if msg := checkKey(k); msg != "" {
		return fmt.Sprintf("%q: %s", k, msg)
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return fmt.Sprintf("%s=%q: %s", k, v, strings.Join(errs, "; "))
	}
	return ""
}
