package render

import (
	"regexp"
	"strings"
)

// yamlQuoted is how YAML parsers quote the value they could not decode:
// cannot unmarshal !!str `c3VwZXJzZWNyZXQ=` into map[string]interface {}.
var yamlQuoted = regexp.MustCompile("(!![a-z]+ )`[^`]*`")

// redactContents takes out of a tool's message the parts that quote a
// manifest's contents, which may be a Secret's data: kyaml's "node
// contents:" dump and the value a YAML decoder quotes. What is left still
// says what was wrong and where; the error goes into histories, logs and
// the app's status, which are not the place for manifest bodies.
func redactContents(msg string) string {
	if before, _, found := strings.Cut(msg, "node contents:"); found {
		msg = strings.TrimRight(before, " :\n") + " (the node's contents are not shown: they may hold a Secret's data)"
	}
	return yamlQuoted.ReplaceAllString(msg, "${1}value")
}
